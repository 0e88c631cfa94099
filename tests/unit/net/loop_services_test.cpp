// net::Loop's services for the layers above: call_after/cancel_timer (from any thread), fd
// readiness watches, and Loop::current().
#include <fcntl.h>
#include <gtest/gtest.h>
#include <unistd.h>

#include <atomic>
#include <chrono>
#include <future>
#include <thread>

#include "core/clock.hpp"
#include "net/loop.hpp"

namespace rivet::net {
namespace {

using namespace std::chrono_literals;

struct Running {
    Loop loop;
    std::thread thread{[this] { loop.run(); }};
    ~Running() {
        loop.stop();
        thread.join();
    }
    template <class F>
    auto on_loop(F fn) {
        std::promise<decltype(fn())> p;
        auto f = p.get_future();
        loop.post([&] {
            if constexpr (std::is_void_v<decltype(fn())>) {
                fn();
                p.set_value();
            } else {
                p.set_value(fn());
            }
        });
        EXPECT_EQ(f.wait_for(2s), std::future_status::ready);
        return f.get();
    }
};

TEST(LoopServices, CurrentIsTheLoopOnItsThreadOnly) {
    Running r;
    EXPECT_EQ(Loop::current(), nullptr);
    EXPECT_EQ(r.on_loop([&] { return Loop::current(); }), &r.loop);
    EXPECT_TRUE(r.on_loop([&] { return r.loop.on_loop_thread(); }));
    EXPECT_FALSE(r.loop.on_loop_thread());
}

TEST(LoopServices, CallAfterFiresOnTheLoopNotEarlyWithMillisecondTicks) {
    Running r;
    std::promise<std::pair<uint64_t, bool>> fired;
    uint64_t start = core::monotonic_ms();
    r.loop.call_after(30, [&] {
        fired.set_value({core::monotonic_ms(), r.loop.on_loop_thread()});
    });
    auto f = fired.get_future();
    ASSERT_EQ(f.wait_for(2s), std::future_status::ready);
    auto [at, on_loop] = f.get();
    EXPECT_TRUE(on_loop);
    // The coarse clock may be a few ms behind; the engine's 100 ms wheel would round to 100.
    EXPECT_GE(at - start, 25u);
    EXPECT_LT(at - start, 95u) << "a 30 ms timer must not wait for a 100 ms tick";
}

TEST(LoopServices, TimersFireInDeadlineOrder) {
    Running r;
    std::mutex mu;
    std::vector<int> order;
    std::promise<void> done;
    for (int ms : {40, 10, 25})
        r.loop.call_after(ms, [&, ms] {
            std::lock_guard lock(mu);
            order.push_back(ms);
            if (order.size() == 3) done.set_value();
        });
    ASSERT_EQ(done.get_future().wait_for(2s), std::future_status::ready);
    EXPECT_EQ(order, (std::vector<int>{10, 25, 40}));
}

TEST(LoopServices, CancelledTimersNeverFireFromAnyThread) {
    Running r;
    std::atomic<int> fired{0};
    auto on_loop_id = r.on_loop([&] { return r.loop.call_after(20, [&] { ++fired; }); });
    EXPECT_TRUE(r.on_loop([&] { return r.loop.cancel_timer(on_loop_id); }));
    EXPECT_FALSE(r.on_loop([&] { return r.loop.cancel_timer(on_loop_id); }));  // once only
    auto off_loop_id = r.loop.call_after(20, [&] { ++fired; });
    r.loop.cancel_timer(off_loop_id);  // posted behind the arming: both in order
    std::promise<void> later;
    r.loop.call_after(60, [&] { later.set_value(); });
    ASSERT_EQ(later.get_future().wait_for(2s), std::future_status::ready);
    EXPECT_EQ(fired.load(), 0);
}

TEST(LoopServices, ATimerCallbackMayCancelAnotherDueInTheSameTurn) {
    Running r;
    std::atomic<int> fired{0};
    std::promise<void> done;
    r.on_loop([&] {
        auto second = std::make_shared<Loop::TimerId>(0);
        r.loop.call_after(5, [&, second] {
            ++fired;
            r.loop.cancel_timer(*second);
        });
        *second = r.loop.call_after(5, [&] { fired += 100; });
        r.loop.call_after(50, [&] { done.set_value(); });
    });
    ASSERT_EQ(done.get_future().wait_for(2s), std::future_status::ready);
    // Either order within the slot is allowed, but the second never fires after being cancelled.
    EXPECT_TRUE(fired.load() == 1 || fired.load() == 101) << fired.load();
}

TEST(LoopServices, WatchReportsReadabilityUntilUnwatched) {
    Running r;
    int p[2];
    ASSERT_EQ(pipe2(p, O_NONBLOCK | O_CLOEXEC), 0);
    std::atomic<int> reads{0};
    Loop::WatchId id = r.on_loop([&] {
        return r.loop.watch(p[0], kReadable, [&, fd = p[0]](uint32_t events) {
            EXPECT_TRUE(events & kReadable);
            char buf[16];
            while (read(fd, buf, sizeof buf) > 0) {
            }
            ++reads;
        });
    });
    ASSERT_EQ(write(p[1], "x", 1), 1);
    for (int i = 0; i < 200 && reads.load() < 1; ++i) std::this_thread::sleep_for(5ms);
    EXPECT_EQ(reads.load(), 1);
    ASSERT_EQ(write(p[1], "y", 1), 1);
    for (int i = 0; i < 200 && reads.load() < 2; ++i) std::this_thread::sleep_for(5ms);
    EXPECT_EQ(reads.load(), 2);
    r.on_loop([&] { r.loop.unwatch(id); });
    ASSERT_EQ(write(p[1], "z", 1), 1);
    std::this_thread::sleep_for(50ms);
    EXPECT_EQ(reads.load(), 2);
    r.on_loop([&] { r.loop.unwatch(id); });  // twice: harmless
    close(p[0]);
    close(p[1]);
}

TEST(LoopServices, AWatchMayUnwatchItselfAndAnotherReadyInTheSameTurn) {
    Running r;
    int a[2], b[2];
    ASSERT_EQ(pipe2(a, O_NONBLOCK | O_CLOEXEC), 0);
    ASSERT_EQ(pipe2(b, O_NONBLOCK | O_CLOEXEC), 0);
    std::atomic<int> calls{0};
    r.on_loop([&] {
        auto ids = std::make_shared<std::pair<Loop::WatchId, Loop::WatchId>>();
        auto both = [&, ids](uint32_t) {
            ++calls;
            r.loop.unwatch(ids->first);  // the other may be in this turn's batch: not freed yet
            r.loop.unwatch(ids->second);
        };
        ids->first = r.loop.watch(a[0], kReadable, both);
        ids->second = r.loop.watch(b[0], kReadable, both);
    });
    ASSERT_EQ(write(a[1], "x", 1), 1);
    ASSERT_EQ(write(b[1], "x", 1), 1);
    std::this_thread::sleep_for(50ms);
    r.on_loop([] {});
    EXPECT_EQ(calls.load(), 1);
    for (int fd : {a[0], a[1], b[0], b[1]}) close(fd);
}

TEST(LoopServices, WatchReportsWritabilityAndHangup) {
    Running r;
    int p[2];
    ASSERT_EQ(pipe2(p, O_NONBLOCK | O_CLOEXEC), 0);
    std::promise<uint32_t> got;
    auto id = r.on_loop([&] {
        return r.loop.watch(p[1], kWritable, [&, called = false](uint32_t ev) mutable {
            if (!called) got.set_value(ev);
            called = true;
        });
    });
    auto f = got.get_future();
    ASSERT_EQ(f.wait_for(2s), std::future_status::ready);
    EXPECT_TRUE(f.get() & kWritable);
    r.on_loop([&] { r.loop.unwatch(id); });
    close(p[0]);
    close(p[1]);
}

}  // namespace
}  // namespace rivet::net
