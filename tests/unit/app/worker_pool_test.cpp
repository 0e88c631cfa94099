#include "app/worker_pool.hpp"

#include <gtest/gtest.h>

#include <atomic>
#include <future>

using rivet::app::WorkerPool;

TEST(WorkerPool, RunsEveryJob) {
    std::atomic<int> done{0};
    {
        WorkerPool pool(3, 1000);
        for (int i = 0; i < 500; ++i) ASSERT_TRUE(pool.try_submit([&] { ++done; }));
    }  // the destructor finishes the queue
    EXPECT_EQ(done.load(), 500);
}

TEST(WorkerPool, RefusesPastTheQueueBound) {
    WorkerPool pool(1, 2);
    std::promise<void> release;
    std::shared_future<void> gate = release.get_future().share();
    std::promise<void> started;
    ASSERT_TRUE(pool.try_submit([&] {
        started.set_value();
        gate.wait();
    }));
    started.get_future().wait();  // the worker is busy: the queue now fills
    EXPECT_TRUE(pool.try_submit([gate] { gate.wait(); }));
    EXPECT_TRUE(pool.try_submit([gate] { gate.wait(); }));
    EXPECT_EQ(pool.queued(), 2u);
    EXPECT_FALSE(pool.try_submit([] {}));
    release.set_value();
    pool.stop();
    EXPECT_EQ(pool.queued(), 0u);
    EXPECT_FALSE(pool.try_submit([] {}));  // stopped
}

TEST(WorkerPool, IdleWorkersAreRoomToo) {
    // Four idle workers and a queue of one: five jobs fit, whoever is fastest to take them.
    WorkerPool pool(4, 1);
    std::promise<void> release;
    std::shared_future<void> gate = release.get_future().share();
    for (int i = 0; i < 5; ++i) EXPECT_TRUE(pool.try_submit([gate] { gate.wait(); })) << i;
    EXPECT_FALSE(pool.try_submit([] {}));
    release.set_value();
}

TEST(WorkerPool, DefaultsToOneWorkerPerCore) {
    WorkerPool pool(0, 1);
    EXPECT_GE(pool.workers(), 1u);
}
