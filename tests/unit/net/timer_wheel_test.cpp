#include "net/timer_wheel.hpp"

#include <gtest/gtest.h>

#include <algorithm>
#include <chrono>
#include <cstdint>
#include <functional>
#include <memory>
#include <random>
#include <vector>

namespace rivet::net {
namespace {

struct TestTimer final : Timer {
    explicit TestTimer(TimerWheel& w) : wheel(w) {}
    ~TestTimer() { wheel.cancel(*this); }

    void on_timeout() override {
        ++fired;
        fired_at.push_back(wheel.now());
        if (fn) fn(*this);
    }

    TimerWheel& wheel;
    int fired = 0;
    std::vector<uint64_t> fired_at;
    std::function<void(TestTimer&)> fn;
};

// Advances 1 ms at a time, the finest a loop could ever call advance().
void step_to(TimerWheel& w, uint64_t to) {
    for (uint64_t t = w.now() + 1; t <= to; ++t) w.advance(t);
}

TEST(TimerWheel, FiresAtOrAfterDeadlineWithinOneTick) {
    constexpr uint64_t kTick = 100;
    // Start off a tick boundary so deadlines fall both on and between boundaries.
    TimerWheel w(1'037, kTick, 64);
    std::vector<std::unique_ptr<TestTimer>> timers;
    std::vector<uint64_t> deadlines;
    for (uint64_t delay : {0, 1, 62, 63, 99, 100, 101, 163, 250, 999, 1000, 6399, 6400, 6401}) {
        timers.push_back(std::make_unique<TestTimer>(w));
        w.schedule(*timers.back(), delay);
        deadlines.push_back(w.now() + delay);
        EXPECT_EQ(timers.back()->deadline(), w.now() + delay);
        EXPECT_TRUE(timers.back()->armed());
    }
    step_to(w, 1'037 + 6401 + kTick);
    for (size_t i = 0; i < timers.size(); ++i) {
        SCOPED_TRACE(deadlines[i]);
        ASSERT_EQ(timers[i]->fired, 1);
        EXPECT_GE(timers[i]->fired_at[0], deadlines[i]);
        // Delay 0 may wait for the next boundary even though it is due at once.
        EXPECT_LE(timers[i]->fired_at[0], deadlines[i] + kTick);
        EXPECT_FALSE(timers[i]->armed());
        EXPECT_EQ(timers[i]->deadline(), 0u);
    }
    EXPECT_EQ(w.size(), 0u);
}

TEST(TimerWheel, NotFiredOneMillisecondBeforeDeadline) {
    TimerWheel w(0, 10, 16);
    TestTimer t(w);
    w.schedule(t, 500);  // on a tick boundary: the slot comes due exactly at the deadline
    w.advance(499);
    EXPECT_EQ(t.fired, 0);
    w.advance(500);
    EXPECT_EQ(t.fired, 1);

    w.schedule(t, 95);  // deadline 595, between boundaries
    w.advance(590);
    w.advance(594);
    EXPECT_EQ(t.fired, 1);
    w.advance(600);
    EXPECT_EQ(t.fired, 2);
}

TEST(TimerWheel, RearmLaterIsLazyAndDefersFiring) {
    TimerWheel w(0, 100, 512);
    TestTimer t(w);
    w.schedule(t, 1'000);
    step_to(w, 500);
    w.schedule(t, 2'000);  // deadline 2500: recorded only, the timer stays in the 1000 slot
    EXPECT_EQ(t.deadline(), 2'500u);
    EXPECT_EQ(w.size(), 1u);
    step_to(w, 2'499);
    EXPECT_EQ(t.fired, 0);
    EXPECT_TRUE(t.armed());
    step_to(w, 2'600);
    ASSERT_EQ(t.fired, 1);
    EXPECT_GE(t.fired_at[0], 2'500u);
    EXPECT_LT(t.fired_at[0], 2'600u);
}

TEST(TimerWheel, RearmOnEveryRequestKeepsPushingTheDeadline) {
    TimerWheel w(0, 100, 64);
    TestTimer t(w);
    for (uint64_t now = 0; now < 20'000; now += 7) {
        w.advance(now);
        w.schedule(t, 1'000);
    }
    EXPECT_EQ(t.fired, 0);
    uint64_t deadline = t.deadline();
    step_to(w, deadline + 100);
    ASSERT_EQ(t.fired, 1);
    EXPECT_GE(t.fired_at[0], deadline);
}

TEST(TimerWheel, RearmEarlierFiresEarlier) {
    TimerWheel w(0, 100, 512);
    TestTimer t(w);
    w.schedule(t, 10'000);
    step_to(w, 50);
    w.schedule(t, 200);  // deadline 250, before the slot the timer sits in
    EXPECT_EQ(t.deadline(), 250u);
    step_to(w, 400);
    ASSERT_EQ(t.fired, 1);
    EXPECT_GE(t.fired_at[0], 250u);
    EXPECT_LT(t.fired_at[0], 350u);
    EXPECT_EQ(w.size(), 0u);
}

TEST(TimerWheel, RearmEarlierAfterLazyLater) {
    TimerWheel w(0, 100, 512);
    TestTimer t(w);
    w.schedule(t, 1'000);
    w.schedule(t, 5'000);  // lazy: stays in the 1000 slot
    w.schedule(t, 3'000);  // still after the 1000 slot: lazy again
    w.schedule(t, 300);    // before it: must move
    step_to(w, 299);
    EXPECT_EQ(t.fired, 0);
    step_to(w, 1'500);
    ASSERT_EQ(t.fired, 1);
    EXPECT_EQ(t.fired_at[0], 300u);
}

TEST(TimerWheel, Cancel) {
    TimerWheel w(0, 10, 8);
    TestTimer a(w), b(w), c(w);
    w.cancel(a);  // never armed: no-op
    EXPECT_EQ(w.size(), 0u);
    w.schedule(a, 50);
    w.schedule(b, 50);
    w.schedule(c, 50);
    EXPECT_EQ(w.size(), 3u);
    w.cancel(b);  // middle of the slot's list
    EXPECT_FALSE(b.armed());
    EXPECT_EQ(w.size(), 2u);
    w.cancel(b);  // twice: no-op
    EXPECT_EQ(w.size(), 2u);
    w.cancel(c);  // head
    w.schedule(c, 5'000);
    w.schedule(c, 20'000);  // lazy re-arm, then cancel from the lazy slot
    w.cancel(c);
    EXPECT_EQ(w.size(), 1u);
    step_to(w, 30'000);
    EXPECT_EQ(a.fired, 1);
    EXPECT_EQ(b.fired, 0);
    EXPECT_EQ(c.fired, 0);
    EXPECT_EQ(w.size(), 0u);
    EXPECT_EQ(w.next_timeout_ms(), -1);
    w.cancel(a);  // already fired: no-op
    EXPECT_EQ(w.size(), 0u);
}

TEST(TimerWheel, ManyRandomTimersFireInDeadlineOrder) {
    constexpr uint64_t kTick = 10;
    constexpr uint64_t kMaxStep = 25;
    constexpr uint64_t kStart = 123'457;
    TimerWheel w(kStart, kTick, 256);  // one revolution = 2560 ms; deadlines go up to 20 of them
    std::mt19937_64 rng(42);
    std::vector<std::unique_ptr<TestTimer>> timers;
    std::vector<uint64_t> deadline;
    std::vector<size_t> order;
    for (size_t i = 0; i < 10'000; ++i) {
        timers.push_back(std::make_unique<TestTimer>(w));
        timers.back()->fn = [&order, i](TestTimer&) { order.push_back(i); };
        w.schedule(*timers.back(), rng() % 50'000);
        // Re-arm a third to exercise both the lazy (later) and the relink (earlier) paths.
        if (i % 3 == 0) w.schedule(*timers.back(), rng() % 50'000);
        deadline.push_back(timers.back()->deadline());
    }
    EXPECT_EQ(w.size(), 10'000u);

    while (w.size() > 0) {
        int next = w.next_timeout_ms();
        ASSERT_GT(next, 0);
        size_t before = order.size();
        uint64_t step = 1 + rng() % kMaxStep;
        w.advance(w.now() + step);
        // next_timeout_ms() is a safe sleep: nothing became due sooner than it said.
        if (order.size() > before) {
            EXPECT_GE(step, static_cast<uint64_t>(next));
        }
        ASSERT_LT(w.now(), kStart + 60'000) << "timers left: " << w.size();
    }
    ASSERT_EQ(order.size(), 10'000u);

    uint64_t last_tick = 0;
    for (size_t k = 0; k < order.size(); ++k) {
        size_t i = order[k];
        const TestTimer& t = *timers[i];
        ASSERT_EQ(t.fired, 1);
        EXPECT_GE(t.fired_at[0], deadline[i]);
        EXPECT_LT(t.fired_at[0], deadline[i] + kTick + kMaxStep);
        // Within a tick the order is arbitrary; across ticks it follows the deadlines.
        uint64_t tick = (deadline[i] + kTick - 1) / kTick;
        EXPECT_GE(tick, last_tick) << "fired out of order at " << k;
        last_tick = tick;
    }
}

TEST(TimerWheel, DeadlineBeyondOneRevolution) {
    TimerWheel w(0, 10, 8);  // one revolution = 80 ms
    TestTimer t(w), u(w);
    w.schedule(t, 1'005);
    w.schedule(u, 80);  // same slot as 0, exactly one revolution away
    step_to(w, 1'004);
    EXPECT_EQ(u.fired, 1);
    EXPECT_EQ(u.fired_at[0], 80u);
    EXPECT_EQ(t.fired, 0);
    EXPECT_TRUE(t.armed());
    step_to(w, 1'100);
    ASSERT_EQ(t.fired, 1);
    EXPECT_EQ(t.fired_at[0], 1'010u);
}

TEST(TimerWheel, HugeDelayDoesNotOverflow) {
    TimerWheel w(1'000, 100, 64);
    TestTimer t(w);
    w.schedule(t, UINT64_MAX);
    EXPECT_EQ(t.deadline(), UINT64_MAX);
    w.advance(1'000'000);
    EXPECT_EQ(t.fired, 0);
    EXPECT_GT(w.next_timeout_ms(), 0);
    w.cancel(t);
}

TEST(TimerWheel, ClockJumpFarAheadIsBoundedAndFiresEverythingDue) {
    TimerWheel w(0, 1, 1024);  // 1 ms ticks: a walk tick by tick would take hours
    TestTimer a(w), b(w), c(w), d(w);
    w.schedule(a, 5);
    w.schedule(b, 1'500);  // a lap ahead
    w.schedule(c, 900'000'000'000);
    w.schedule(d, 2'000'000'000'000);  // not due after the jump
    auto start = std::chrono::steady_clock::now();
    w.advance(1'000'000'000'000);
    auto took = std::chrono::steady_clock::now() - start;
    EXPECT_LT(took, std::chrono::seconds(1));
    EXPECT_EQ(a.fired, 1);
    EXPECT_EQ(b.fired, 1);
    EXPECT_EQ(c.fired, 1);
    EXPECT_EQ(d.fired, 0);
    EXPECT_EQ(w.size(), 1u);
    w.advance(1'999'999'999'999);
    EXPECT_EQ(d.fired, 0);
    w.advance(2'000'000'000'000);
    EXPECT_EQ(d.fired, 1);
    EXPECT_EQ(w.size(), 0u);
}

TEST(TimerWheel, ClockJumpJustOverOneRevolution) {
    TimerWheel w(0, 10, 8);
    std::vector<std::unique_ptr<TestTimer>> timers;
    for (uint64_t delay = 0; delay <= 200; delay += 5) {
        timers.push_back(std::make_unique<TestTimer>(w));
        w.schedule(*timers.back(), delay);
    }
    w.advance(93);  // 9 ticks on an 8-slot wheel
    for (size_t i = 0; i < timers.size(); ++i) {
        uint64_t deadline = i * 5;
        EXPECT_EQ(timers[i]->fired, deadline <= 93 ? 1 : 0) << deadline;
    }
    step_to(w, 300);
    for (auto& t : timers) EXPECT_EQ(t->fired, 1);
}

TEST(TimerWheel, ClockGoingBackIsIgnored) {
    TimerWheel w(1'000, 10, 8);
    TestTimer t(w);
    w.schedule(t, 50);
    w.advance(500);
    EXPECT_EQ(w.now(), 1'000u);
    EXPECT_EQ(t.fired, 0);
    w.advance(1'050);
    EXPECT_EQ(t.fired, 1);
}

TEST(TimerWheel, CallbackReschedulesItself) {
    TimerWheel w(0, 10, 16);
    TestTimer t(w);
    t.fn = [&w](TestTimer& self) {
        if (self.fired < 10) w.schedule(self, 250);
    };
    w.schedule(t, 250);
    step_to(w, 10'000);
    ASSERT_EQ(t.fired, 10);
    for (int i = 0; i < 10; ++i) EXPECT_EQ(t.fired_at[i], 250u * (i + 1));
    EXPECT_FALSE(t.armed());
}

TEST(TimerWheel, CallbackReschedulingWithZeroDelayFiresOncePerAdvance) {
    TimerWheel w(0, 1, 8);
    TestTimer t(w);
    t.fn = [&w](TestTimer& self) { w.schedule(self, 0); };
    w.schedule(t, 0);
    // A full-revolution walk; the re-armed timer lands in slot 4, which the walk visits after
    // slot 1 where it fired, and must not fire again there.
    w.advance(1'000'003);
    EXPECT_EQ(t.fired, 1);
    w.advance(1'000'004);
    EXPECT_EQ(t.fired, 2);
    w.cancel(t);
}

TEST(TimerWheel, CallbackCancelsAnotherDueTimerInSameSlot) {
    TimerWheel w(0, 100, 8);
    std::vector<std::unique_ptr<TestTimer>> timers;
    for (int i = 0; i < 5; ++i) timers.push_back(std::make_unique<TestTimer>(w));
    // Whichever fires first cancels all the others, wherever they sit in the detached list.
    for (auto& t : timers) {
        t->fn = [&timers, &w](TestTimer& self) {
            for (auto& o : timers)
                if (o.get() != &self) w.cancel(*o);
        };
        w.schedule(*t, 150);
    }
    step_to(w, 1'000);
    int fired = 0;
    for (auto& t : timers) fired += t->fired;
    EXPECT_EQ(fired, 1);
    EXPECT_EQ(w.size(), 0u);
}

TEST(TimerWheel, CallbackDestroysOtherTimersAndItself) {
    TimerWheel w(0, 100, 8);
    std::vector<std::unique_ptr<TestTimer>> timers;
    for (int i = 0; i < 4; ++i) timers.push_back(std::make_unique<TestTimer>(w));
    int calls = 0;
    for (auto& t : timers) {
        t->fn = [&timers, &calls](TestTimer& self) {
            ++calls;
            // Destructors cancel; run under ASan to catch a wheel that touches them afterwards.
            for (auto& o : timers)
                if (o.get() != &self) o.reset();
            for (auto& o : timers)
                if (o.get() == &self) o.reset();
        };
        w.schedule(*t, 100);
    }
    step_to(w, 500);
    EXPECT_EQ(calls, 1);
    EXPECT_EQ(w.size(), 0u);
}

TEST(TimerWheel, CallbackArmsAndMovesOtherTimers) {
    TimerWheel w(0, 10, 8);
    TestTimer a(w), c(w), fresh(w);
    // Both due in the same slot; whichever runs first arms `fresh` and pushes the other back while
    // it waits in the detached list (lazy path), so the other must be re-linked, not fired.
    bool first = true;
    auto push_back = [&](TestTimer& other) {
        if (!first) return;
        first = false;
        w.schedule(fresh, 0);
        w.schedule(other, 1'000);
    };
    a.fn = [&](TestTimer&) { push_back(c); };
    c.fn = [&](TestTimer&) { push_back(a); };
    w.schedule(a, 20);
    w.schedule(c, 20);
    step_to(w, 20);
    EXPECT_EQ(a.fired + c.fired, 1);
    EXPECT_EQ(w.size(), 2u);
    step_to(w, 2'000);
    EXPECT_EQ(fresh.fired, 1);
    EXPECT_EQ(fresh.fired_at[0], 30u);
    ASSERT_EQ(a.fired, 1);
    ASSERT_EQ(c.fired, 1);
    EXPECT_EQ(std::min(a.fired_at[0], c.fired_at[0]), 20u);
    EXPECT_EQ(std::max(a.fired_at[0], c.fired_at[0]), 1'020u);
}

TEST(TimerWheel, SizeAndNextTimeout) {
    TimerWheel w(0, 100, 512);
    EXPECT_EQ(w.size(), 0u);
    EXPECT_EQ(w.next_timeout_ms(), -1);
    TestTimer a(w), b(w);
    w.schedule(a, 1'000);
    EXPECT_EQ(w.size(), 1u);
    EXPECT_EQ(w.next_timeout_ms(), 1'000);
    w.advance(50);
    EXPECT_EQ(w.next_timeout_ms(), 950);
    w.schedule(b, 120);  // deadline 170: slot at 200
    EXPECT_EQ(w.size(), 2u);
    EXPECT_EQ(w.next_timeout_ms(), 150);
    w.schedule(b, 5'000);  // lazy: the slot at 200 still holds it, an early wake-up is fine
    EXPECT_EQ(w.size(), 2u);
    EXPECT_EQ(w.next_timeout_ms(), 150);
    w.advance(200);
    EXPECT_EQ(w.next_timeout_ms(), 800);
    w.cancel(a);
    EXPECT_EQ(w.size(), 1u);
    EXPECT_EQ(w.next_timeout_ms(), 4'900);  // b, re-linked at 200
    w.cancel(b);
    EXPECT_EQ(w.size(), 0u);
    EXPECT_EQ(w.next_timeout_ms(), -1);
}

TEST(TimerWheel, NextTimeoutBoundsLappedTimer) {
    TimerWheel w(0, 10, 8);  // one revolution = 80 ms
    TestTimer t(w);
    w.schedule(t, 1'000);
    int next = w.next_timeout_ms();
    EXPECT_GT(next, 0);
    EXPECT_LE(next, 1'000);
    // Following the hint, as the loop does, reaches the deadline without firing early.
    while (t.fired == 0) {
        int wait = w.next_timeout_ms();
        ASSERT_GT(wait, 0);
        w.advance(w.now() + static_cast<uint64_t>(wait));
    }
    EXPECT_EQ(t.fired_at[0], 1'000u);
    EXPECT_EQ(w.next_timeout_ms(), -1);
}

TEST(TimerWheel, NonPowerOfTwoSlotsAndWheelDestroyedFirst) {
    auto w = std::make_unique<TimerWheel>(0, 10, 100);
    struct Plain final : Timer {
        void on_timeout() override { ++fired; }
        int fired = 0;
    } p;
    w->schedule(p, 2'000);
    w->advance(1'999);
    EXPECT_EQ(p.fired, 0);
    w->advance(2'000);
    EXPECT_EQ(p.fired, 1);
    w->schedule(p, 10);
    w.reset();
    EXPECT_FALSE(p.armed());
}

}  // namespace
}  // namespace rivet::net
