// net::Loop: cross-thread post and stop, timers, readiness on a socketpair, turn-end hooks.
// Every test runs the loop on a thread of its own and bounds its waits, so a broken loop fails
// the test instead of hanging it.
#include "net/loop.hpp"

#include "loop_runner.hpp"

#include <gtest/gtest.h>
#include <sys/socket.h>
#include <unistd.h>

#include <array>
#include <atomic>
#include <chrono>
#include <condition_variable>
#include <functional>
#include <future>
#include <memory>
#include <mutex>
#include <thread>
#include <vector>

namespace rivet::net {
namespace {

using namespace std::chrono_literals;
using Clock = std::chrono::steady_clock;

using net::testing::LoopRunner;

// Collects what the loop reports; on_io runs on the loop's thread, tests wait on the other.
class Recorder final : public IoHandler {
public:
    void on_io(uint32_t events) override {
        std::lock_guard lock(mu_);
        events_.push_back(events);
        if (react) react(events);
        cv_.notify_all();
    }
    // Waits until some reported mask has all of `bits`.
    bool wait_for(uint32_t bits, std::chrono::milliseconds timeout = 2s) {
        std::unique_lock lock(mu_);
        return cv_.wait_for(lock, timeout, [&] {
            for (uint32_t e : events_)
                if ((e & bits) == bits) return true;
            return false;
        });
    }
    void clear() {
        std::lock_guard lock(mu_);
        events_.clear();
    }
    std::function<void(uint32_t)> react;  // set before registration

private:
    std::mutex mu_;
    std::condition_variable cv_;
    std::vector<uint32_t> events_;
};

struct SocketPair {
    SocketPair() { EXPECT_EQ(socketpair(AF_UNIX, SOCK_STREAM | SOCK_NONBLOCK, 0, fd), 0); }
    ~SocketPair() {
        for (int f : fd)
            if (f >= 0) close(f);
    }
    int fd[2] = {-1, -1};
};

TEST(LoopTest, PostFromAnotherThreadRunsOnTheLoopThread) {
    LoopRunner r;
    std::promise<std::thread::id> ran_on;
    std::thread([&] { r.loop.post([&] { ran_on.set_value(std::this_thread::get_id()); }); }).join();
    auto f = ran_on.get_future();
    ASSERT_EQ(f.wait_for(2s), std::future_status::ready);
    std::thread::id loop_id;
    r.on_loop([&] { loop_id = std::this_thread::get_id(); });
    EXPECT_EQ(f.get(), loop_id);
    EXPECT_NE(loop_id, std::this_thread::get_id());
}

TEST(LoopTest, ManyPostsFromSeveralThreadsAllRunInOrderPerThread) {
    LoopRunner r;
    constexpr int kPerThread = 1000;
    std::vector<int> seen[2];  // touched only on the loop's thread
    std::vector<std::thread> posters;
    for (int t = 0; t < 2; ++t)
        posters.emplace_back([&, t] {
            for (int i = 0; i < kPerThread; ++i) r.loop.post([&, t, i] { seen[t].push_back(i); });
        });
    for (auto& p : posters) p.join();
    r.on_loop([&] {
        for (auto& s : seen) {
            ASSERT_EQ(s.size(), size_t(kPerThread));
            for (int i = 0; i < kPerThread; ++i) EXPECT_EQ(s[i], i);
        }
    });
}

TEST(LoopTest, StopFromAnotherThreadEndsRun) {
    Loop loop;
    std::promise<void> ended;
    std::thread runner([&] {
        loop.run();
        ended.set_value();
    });
    std::thread([&] { loop.stop(); }).join();
    bool stopped = ended.get_future().wait_for(2s) == std::future_status::ready;
    if (!stopped) loop.stop();  // keep trying so the join below cannot hang the suite
    runner.join();
    EXPECT_TRUE(stopped);
}

struct FlagTimer final : Timer {
    std::promise<Clock::time_point> fired;
    void on_timeout() override { fired.set_value(Clock::now()); }
};

TEST(LoopTest, TimerFiresAfterItsDelay) {
    LoopRunner r;
    FlagTimer timer;
    auto scheduled = Clock::now();
    r.on_loop([&] { r.loop.timers().schedule(timer, 150); });
    auto f = timer.fired.get_future();
    ASSERT_EQ(f.wait_for(2s), std::future_status::ready);
    auto waited = f.get() - scheduled;
    EXPECT_GE(waited, 100ms);  // not early (coarse clock and tick rounding allowed for)
    EXPECT_LT(waited, 1500ms);
}

// call_after() backs sleep(): a caller timing it with a fine clock must never see it end early,
// though the loop keeps time on the coarse clock (which lags the fine one by up to a tick).
TEST(LoopTest, CallbackTimerIsNeverEarlyOnAFineClock) {
    LoopRunner r;
    constexpr int kTimers = 40;
    struct Shot {
        Clock::time_point armed, fired;
    };
    auto shots = std::make_shared<std::vector<Shot>>(kTimers);
    auto all = std::make_shared<std::promise<void>>();
    auto left = std::make_shared<int>(kTimers);
    r.on_loop([&] {
        for (int i = 0; i < kTimers; ++i) {
            uint64_t delay = 1 + i % 8;  // short delays: the coarse clock's lag is a large share
            (*shots)[i].armed = Clock::now();
            r.loop.call_after(delay, [shots, all, left, i] {
                (*shots)[i].fired = Clock::now();
                if (--*left == 0) all->set_value();
            });
        }
    });
    ASSERT_EQ(all->get_future().wait_for(10s), std::future_status::ready);
    for (int i = 0; i < kTimers; ++i) {
        auto waited = (*shots)[i].fired - (*shots)[i].armed;
        EXPECT_GE(waited, std::chrono::milliseconds(1 + i % 8)) << "timer " << i;
    }
}

TEST(LoopTest, CancelledTimerDoesNotFire) {
    LoopRunner r;
    FlagTimer timer;
    r.on_loop([&] {
        r.loop.timers().schedule(timer, 100);
        r.loop.timers().cancel(timer);
    });
    EXPECT_EQ(timer.fired.get_future().wait_for(400ms), std::future_status::timeout);
}

TEST(LoopTest, ReadableReportedWhenDataArrives) {
    LoopRunner r;
    SocketPair sp;
    Recorder rec;
    r.on_loop([&] { r.loop.add(sp.fd[0], kReadable, &rec); });
    EXPECT_FALSE(rec.wait_for(kReadable, 50ms));  // nothing to read yet
    ASSERT_EQ(write(sp.fd[1], "x", 1), 1);
    EXPECT_TRUE(rec.wait_for(kReadable));
    r.on_loop([&] { r.loop.remove(sp.fd[0]); });
}

TEST(LoopTest, ModifyToWritableReportsWritable) {
    LoopRunner r;
    SocketPair sp;
    Recorder rec;
    r.on_loop([&] { r.loop.add(sp.fd[0], kReadable, &rec); });
    EXPECT_FALSE(rec.wait_for(kWritable, 50ms));  // not asked for
    r.on_loop([&] { r.loop.modify(sp.fd[0], kReadable | kWritable, &rec); });
    EXPECT_TRUE(rec.wait_for(kWritable));
    // Asking for nothing silences the (level-triggered) writability again.
    r.on_loop([&] { r.loop.modify(sp.fd[0], 0, &rec); });
    rec.clear();
    EXPECT_FALSE(rec.wait_for(kWritable, 100ms));
    r.on_loop([&] { r.loop.remove(sp.fd[0]); });
}

TEST(LoopTest, PeerCloseReportsReadableAndHangup) {
    LoopRunner r;
    SocketPair sp;
    Recorder rec;
    r.on_loop([&] { r.loop.add(sp.fd[0], kReadable, &rec); });
    close(sp.fd[1]);
    sp.fd[1] = -1;
    // The peer gone both ways: EOF to read, and a hang-up.
    EXPECT_TRUE(rec.wait_for(kReadable | kHangup));
    r.on_loop([&] { r.loop.remove(sp.fd[0]); });
}

TEST(LoopTest, HangupReportedEvenWithoutInterest) {
    LoopRunner r;
    SocketPair sp;
    Recorder rec;
    r.on_loop([&] { r.loop.add(sp.fd[0], 0, &rec); });
    close(sp.fd[1]);
    sp.fd[1] = -1;
    EXPECT_TRUE(rec.wait_for(kHangup));
    r.on_loop([&] { r.loop.remove(sp.fd[0]); });
}

TEST(LoopTest, RemovedDescriptorIsNoLongerReported) {
    LoopRunner r;
    SocketPair sp;
    Recorder rec;
    r.on_loop([&] {
        r.loop.add(sp.fd[0], kReadable, &rec);
        r.loop.remove(sp.fd[0]);
    });
    ASSERT_EQ(write(sp.fd[1], "x", 1), 1);
    EXPECT_FALSE(rec.wait_for(kReadable, 100ms));
}

// The fine clock a request's duration starts from: read when the turn began (so no earlier than
// the post that woke it, no later than the task that reads it), and moved on by read_fine_ns.
// Where it counts the TSC it may differ from clock_gettime by its rate's error
// (fine_clock_test.cpp): 5 µs here is what the anchors themselves are allowed.
TEST(LoopTest, FineClockIsReadAtTheTurnsStartAndByReadFineNs) {
    constexpr uint64_t kSlack = 5'000;
    LoopRunner r;
    const uint64_t posted = core::monotonic_ns();
    std::promise<std::array<uint64_t, 4>> seen;
    r.loop.post([&] {
        const uint64_t turn = r.loop.fine_ns();
        const uint64_t in_task = core::monotonic_ns();
        const uint64_t fresh = r.loop.read_fine_ns();
        seen.set_value({turn, in_task, fresh, r.loop.fine_ns()});
    });
    auto f = seen.get_future();
    ASSERT_EQ(f.wait_for(2s), std::future_status::ready);
    auto [turn, in_task, fresh, kept] = f.get();
    EXPECT_GE(turn + kSlack, posted);
    EXPECT_LE(turn, in_task + kSlack);
    EXPECT_GE(fresh + kSlack, in_task);
    EXPECT_EQ(kept, fresh);
}

TEST(LoopTest, TurnEndHooksRunAfterEachTurnsWork) {
    Loop loop;
    std::atomic<int> turns{0};
    std::vector<int> order;  // touched only on the loop's thread
    loop.on_turn_end([&] {
        order.push_back(0);
        turns.fetch_add(1);
    });
    loop.on_turn_end([&] { order.push_back(1); });
    std::thread runner([&] { loop.run(); });
    std::promise<std::vector<int>> seen;
    loop.post([&] { order.push_back(-1); });
    auto deadline = Clock::now() + 2s;
    while (turns.load() == 0 && Clock::now() < deadline) std::this_thread::sleep_for(1ms);
    // Read `order` on the loop's thread: a posted task runs before that turn's hooks.
    loop.post([&] { seen.set_value(order); });
    auto f = seen.get_future();
    bool ready = f.wait_for(2s) == std::future_status::ready;
    loop.stop();
    runner.join();
    ASSERT_TRUE(ready);
    auto got = f.get();
    ASSERT_GE(got.size(), 3u);
    EXPECT_EQ(got[0], -1);  // the posted task, then both hooks in the order they were added
    EXPECT_EQ(got[1], 0);
    EXPECT_EQ(got[2], 1);
}

}  // namespace
}  // namespace rivet::net
