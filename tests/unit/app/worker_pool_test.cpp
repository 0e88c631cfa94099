#include "app/async/worker_pool.hpp"

#include <gtest/gtest.h>

#include <atomic>
#include <future>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

using rivet::Priority;
using rivet::app::WorkerPool;

namespace {

// A pool whose only worker is held busy until release(), so what is submitted meanwhile queues.
struct BusyPool {
    WorkerPool pool;
    std::promise<void> gate;
    std::shared_future<void> opened = gate.get_future().share();

    explicit BusyPool(size_t max_queue) : pool(1, max_queue) {
        std::promise<void> started;
        EXPECT_TRUE(pool.try_submit([&started, g = opened] {
            started.set_value();
            g.wait();
        }));
        started.get_future().wait();
    }
    void release() { gate.set_value(); }
};

}  // namespace

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

TEST(WorkerPool, AWithdrawnJobNeverRunsAndFreesItsPlace) {
    BusyPool busy(2);
    std::atomic<int> ran{0};
    auto owned = std::make_shared<int>(7);  // what a queued job holds (a request, a frame)
    const WorkerPool::Ticket first = busy.pool.try_submit([&ran, owned] { ran += 1; });
    const WorkerPool::Ticket second = busy.pool.try_submit([&ran] { ran += 10; });
    ASSERT_NE(first, WorkerPool::kRefused);
    ASSERT_NE(second, WorkerPool::kRefused);
    EXPECT_EQ(busy.pool.try_submit([] {}), WorkerPool::kRefused);  // full
    EXPECT_TRUE(busy.pool.withdraw(first));
    EXPECT_EQ(owned.use_count(), 1) << "the withdrawn job is destroyed at once";
    EXPECT_FALSE(busy.pool.withdraw(first)) << "only once";
    EXPECT_EQ(busy.pool.queued(), 1u);
    // Its place is free again.
    const WorkerPool::Ticket third = busy.pool.try_submit([&ran] { ran += 100; });
    EXPECT_NE(third, WorkerPool::kRefused);
    EXPECT_FALSE(busy.pool.withdraw(WorkerPool::kRefused));
    busy.release();
    busy.pool.stop();
    EXPECT_EQ(ran.load(), 110);
    EXPECT_FALSE(busy.pool.withdraw(second)) << "a job that ran cannot be withdrawn";
}

TEST(WorkerPool, WithdrawFindsAJobAmongManyOfEveryPriority) {
    BusyPool busy(3000);
    std::atomic<int> ran{0};
    std::vector<WorkerPool::Ticket> tickets;
    const Priority levels[] = {Priority::Low, Priority::Normal, Priority::High};
    for (int i = 0; i < 3000; ++i)
        tickets.push_back(busy.pool.try_submit([&ran] { ++ran; }, levels[i % 3]));
    for (size_t i = 0; i < tickets.size(); i += 2) EXPECT_TRUE(busy.pool.withdraw(tickets[i]));
    EXPECT_EQ(busy.pool.queued(), 1500u);
    busy.release();
    busy.pool.stop();
    EXPECT_EQ(ran.load(), 1500);
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

TEST(WorkerPool, AQueueOfZeroStillFeedsIdleWorkers) {
    BusyPool busy(0);  // its constructor's job was taken by the idle worker
    EXPECT_FALSE(busy.pool.try_submit([] {}));  // no worker idle, and no waiting allowed
    busy.release();
}

TEST(WorkerPool, DefaultsToOneWorkerPerCore) {
    WorkerPool pool(0, 1);
    EXPECT_GE(pool.workers(), 1u);
}

TEST(WorkerPool, HighStartsBeforeEveryQueuedLowerJob) {
    BusyPool busy(16);
    std::mutex m;
    std::vector<std::string> order;
    auto job = [&](std::string name) {
        return [&, name] {
            std::lock_guard lock(m);
            order.push_back(name);
        };
    };
    EXPECT_TRUE(busy.pool.try_submit(job("L1"), Priority::Low));
    EXPECT_TRUE(busy.pool.try_submit(job("L2"), Priority::Low));
    EXPECT_TRUE(busy.pool.try_submit(job("N1"), Priority::Normal));
    EXPECT_TRUE(busy.pool.try_submit(job("L3"), Priority::Low));
    EXPECT_TRUE(busy.pool.try_submit(job("H1"), Priority::High));
    EXPECT_TRUE(busy.pool.try_submit(job("N2")));  // Normal by default
    EXPECT_TRUE(busy.pool.try_submit(job("H2"), Priority::High));
    EXPECT_EQ(busy.pool.queued(), 7u);
    busy.release();
    busy.pool.stop();
    EXPECT_EQ(order, (std::vector<std::string>{"H1", "H2", "N1", "N2", "L1", "L2", "L3"}));
}

TEST(WorkerPool, HighMayWaitPastTheBoundByAQuarter) {
    BusyPool busy(8);  // 8 waiting at most, and 2 more for High
    ASSERT_EQ(busy.pool.high_headroom(), 2u);
    for (int i = 0; i < 4; ++i) EXPECT_TRUE(busy.pool.try_submit([] {}, Priority::Low)) << i;
    for (int i = 0; i < 4; ++i) EXPECT_TRUE(busy.pool.try_submit([] {}, Priority::Normal)) << i;
    EXPECT_FALSE(busy.pool.try_submit([] {}, Priority::Normal));  // the bound, as before
    EXPECT_FALSE(busy.pool.try_submit([] {}, Priority::Low));
    EXPECT_TRUE(busy.pool.try_submit([] {}, Priority::High));
    EXPECT_TRUE(busy.pool.try_submit([] {}, Priority::High));
    EXPECT_FALSE(busy.pool.try_submit([] {}, Priority::High));  // the headroom is used up
    EXPECT_FALSE(busy.pool.try_submit([] {}, Priority::Normal));
    EXPECT_EQ(busy.pool.queued(), 10u);
    busy.release();
}

TEST(WorkerPool, SmallQueuesStillGiveHighOnePlace) {
    BusyPool busy(1);  // a quarter of 1 rounds down, but High gets at least one place
    EXPECT_EQ(busy.pool.high_headroom(), 1u);
    EXPECT_TRUE(busy.pool.try_submit([] {}, Priority::Normal));
    EXPECT_FALSE(busy.pool.try_submit([] {}, Priority::Normal));
    EXPECT_TRUE(busy.pool.try_submit([] {}, Priority::High));
    EXPECT_FALSE(busy.pool.try_submit([] {}, Priority::High));
    busy.release();
}
