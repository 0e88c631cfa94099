// net::FineClock. Most tests drive it with given readings (anchor_with, read_at): a TSC of 3
// ticks per nanosecond, suspends, slewed rates and split anchors, with no dependence on the
// machine's timing. Two check the real clocks, each reading bracketed between clock_gettime
// reads, so that a preemption anywhere only widens the bracket: they hold on a busy machine.
#include "net/fine_clock.hpp"

#include <gtest/gtest.h>

#include <chrono>
#include <thread>

#include "core/clock.hpp"

namespace rivet::net {
namespace {

using namespace std::chrono_literals;

TEST(FineClockTest, ClockGettimeSourceReadsTheMonotonicClock) {
    FineClock clock(FineClock::Source::ClockGettime);
    for (int i = 0; i < 100; ++i) {
        const uint64_t before = core::monotonic_ns();
        const uint64_t anchored = clock.anchor();
        const uint64_t read = clock.read();
        const uint64_t after = core::monotonic_ns();
        EXPECT_LE(before, anchored);
        EXPECT_LE(anchored, read);
        EXPECT_LE(read, after);
        EXPECT_FALSE(clock.counting_tsc());
    }
}

#if RIVET_FINE_CLOCK_TSC

// A TSC counted from `origin` ticks at `start` ns, `num`/`den` ticks per nanosecond (3 GHz
// unless said).
struct Tsc {
    uint64_t start = 1'000'000'000, origin = 500, num = 3, den = 1;
    uint64_t at(uint64_t ns) const { return origin + (ns - start) * num / den; }
};

// Anchors every `step` ns from `from` to `to` (both included), pairing each exactly; returns the
// last anchor's time. `not_counting`, when given, counts the anchors after which the clock did
// not count the TSC.
uint64_t anchor_every(FineClock& clock, const Tsc& tsc, uint64_t from, uint64_t to, uint64_t step,
                      int* not_counting = nullptr) {
    uint64_t ns = from;
    for (; ns <= to; ns += step) {
        clock.anchor_with(ns, tsc.at(ns) - 30, tsc.at(ns) + 30);
        if (not_counting && !clock.counting_tsc()) ++*not_counting;
    }
    return ns - step;
}

constexpr uint64_t kMs = 1'000'000;

TEST(FineClockTest, CountsOnlyOnceTheRateIsMeasuredOver20Ms) {
    FineClock clock(FineClock::Source::Tsc);
    const Tsc tsc;
    uint64_t last = anchor_every(clock, tsc, tsc.start, tsc.start + 19 * kMs, kMs);
    EXPECT_FALSE(clock.counting_tsc()) << "19 ms of anchors";
    last = anchor_every(clock, tsc, last + kMs, last + kMs, kMs);
    ASSERT_TRUE(clock.counting_tsc()) << "20 ms of anchors";
    // 0.5 ms into the turn, by the count: within a nanosecond of the true time.
    const uint64_t read = clock.read_at(tsc.at(last + 500'000));
    EXPECT_NEAR(double(read), double(last + 500'000), 1.0);
}

TEST(FineClockTest, AnAnchorAPreemptionMayHaveSplitIsNotUsed) {
    FineClock clock(FineClock::Source::Tsc);
    const Tsc tsc;
    uint64_t last = anchor_every(clock, tsc, tsc.start, tsc.start + 30 * kMs, kMs);
    ASSERT_TRUE(clock.counting_tsc());
    // Preempted for 50 µs between the first TSC read and the clock: 150,000 ticks apart.
    const uint64_t ns = last + kMs;
    EXPECT_EQ(clock.anchor_with(ns, tsc.at(ns) - 150'000, tsc.at(ns)), ns);
    EXPECT_FALSE(clock.counting_tsc()) << "that turn reads clock_gettime";
    anchor_every(clock, tsc, ns + kMs, ns + kMs, kMs);
    EXPECT_TRUE(clock.counting_tsc()) << "the next paired anchor counts again";
}

// A suspend: the TSC counted 10 s that the monotonic clock did not. Without the check, a rate
// measured across it would read every later duration 500 times too short.
TEST(FineClockTest, ASuspendStopsTheCountUntilTheRateIsMeasuredAgain) {
    FineClock clock(FineClock::Source::Tsc);
    Tsc tsc;
    uint64_t last = anchor_every(clock, tsc, tsc.start, tsc.start + 30 * kMs, kMs);
    ASSERT_TRUE(clock.counting_tsc());
    tsc.origin += 10'000 * kMs * 3;  // the suspend
    last = anchor_every(clock, tsc, last + kMs, last + kMs, kMs);
    EXPECT_FALSE(clock.counting_tsc());
    last = anchor_every(clock, tsc, last + kMs, last + 19 * kMs, kMs);
    EXPECT_FALSE(clock.counting_tsc()) << "measured over 19 ms only";
    last = anchor_every(clock, tsc, last + kMs, last + 2 * kMs, kMs);
    ASSERT_TRUE(clock.counting_tsc());
    EXPECT_NEAR(double(clock.read_at(tsc.at(last + 100'000))), double(last + 100'000), 1.0);
}

// The monotonic clock running 1% slower than the TSC's count (a slew far beyond NTP's): the
// count parts from the anchors by more than 0.1% plus 5 µs, and the rate is measured afresh.
TEST(FineClockTest, ARateThatChangesIsMeasuredAgain) {
    FineClock clock(FineClock::Source::Tsc);
    const Tsc tsc;
    uint64_t last = anchor_every(clock, tsc, tsc.start, tsc.start + 30 * kMs, kMs);
    ASSERT_TRUE(clock.counting_tsc());
    // From here on, 1 ms of the clock takes 3.03 M ticks.
    const Tsc slow{last, tsc.at(last), 303, 100};
    int stopped = 0;
    last = anchor_every(clock, slow, last + kMs, last + 60 * kMs, kMs, &stopped);
    EXPECT_GT(stopped, 0) << "the count kept going at the old rate";
    ASSERT_TRUE(clock.counting_tsc()) << "measured again by 60 ms";
    EXPECT_NEAR(double(clock.read_at(slow.at(last + 300'000))), double(last + 300'000), 2.0);
}

// NTP slews by up to 0.05%: inside the agreement, and followed within the next 1 s window.
TEST(FineClockTest, ASlewIsFollowedWithoutStopping) {
    FineClock clock(FineClock::Source::Tsc);
    const Tsc tsc;
    uint64_t last = anchor_every(clock, tsc, tsc.start, tsc.start + 30 * kMs, kMs);
    ASSERT_TRUE(clock.counting_tsc());
    const Tsc slewed{last, tsc.at(last), 30'015, 10'000};
    int stopped = 0;
    last = anchor_every(clock, slewed, last + kMs, last + 2'100 * kMs, kMs, &stopped);
    EXPECT_EQ(stopped, 0);
    // 0.9 ms into a turn: at the old rate 450 ns off; at the followed one, within 2 ns.
    EXPECT_NEAR(double(clock.read_at(slewed.at(last + 900'000))), double(last + 900'000), 2.0);
}

// A count whose rate no TSC has (here 5 MHz, below the 10 MHz the clock accepts) is never used;
// at 20 MHz, inside the bounds, the same anchors are counted from 20 ms on.
TEST(FineClockTest, ARateNoTscHasIsNotCounted) {
    FineClock clock(FineClock::Source::Tsc);
    const Tsc too_slow{1'000'000'000, 500, 1, 200};
    int not_counting = 0;
    anchor_every(clock, too_slow, too_slow.start, too_slow.start + 2'100 * kMs, kMs, &not_counting);
    EXPECT_EQ(not_counting, 2'101);
    FineClock other(FineClock::Source::Tsc);
    const Tsc slow_but_plausible{1'000'000'000, 500, 1, 50};
    anchor_every(other, slow_but_plausible, slow_but_plausible.start,
                 slow_but_plausible.start + 30 * kMs, kMs);
    EXPECT_TRUE(other.counting_tsc());
}

// A count that ran ahead of the next anchor (the rate's error) is not taken back: the anchor,
// and the readings after it, give no less than the last reading.
TEST(FineClockTest, ReadingsNeverGoBack) {
    FineClock clock(FineClock::Source::Tsc);
    const Tsc tsc;
    uint64_t last = anchor_every(clock, tsc, tsc.start, tsc.start + 30 * kMs, kMs);
    ASSERT_TRUE(clock.counting_tsc());
    const uint64_t read = clock.read_at(tsc.at(last) + 3 * 904'000);  // 0.904 ms into the turn
    ASSERT_NEAR(double(read), double(last + 904'000), 1.0);
    // The next anchor, 0.9 ms after the last, reads the clock 4 µs before that reading.
    const uint64_t ns = last + 900'000;
    EXPECT_GE(clock.anchor_with(ns, tsc.at(ns) - 30, tsc.at(ns) + 30), read);
    EXPECT_GE(clock.read_at(tsc.at(ns)), read) << "a reading at the anchor's own tick";
    EXPECT_GE(clock.read_at(tsc.at(ns) - 1'000), read) << "a core whose TSC reads behind";
}

// On this machine's real TSC: a reading lies between clock_gettime reads taken around it,
// within 5 µs plus 0.1% of the time from the anchor to the later read (the pairings' and the
// rate's errors, NTP's slewing).
TEST(FineClockTest, TscReadingsAgreeWithClockGettime) {
    if (FineClock::best_source() != FineClock::Source::Tsc)
        GTEST_SKIP() << "this machine's kernel does not keep time with the TSC";
    FineClock clock(FineClock::Source::Tsc);
    const auto deadline = std::chrono::steady_clock::now() + 20s;
    while (!clock.counting_tsc() && std::chrono::steady_clock::now() < deadline) {
        clock.anchor();
        std::this_thread::sleep_for(1ms);
    }
    ASSERT_TRUE(clock.counting_tsc()) << "no rate measured in 20 s";
    int counted = 0;
    for (int i = 0; i < 400; ++i) {
        const uint64_t anchored = clock.anchor();
        const uint64_t until = core::monotonic_ns() + uint64_t(i % 40) * 50'000;
        while (core::monotonic_ns() < until) {
        }
        const uint64_t before = core::monotonic_ns();
        const uint64_t read = clock.read();
        const uint64_t after = core::monotonic_ns();
        counted += clock.counting_tsc();
        const uint64_t slack = 5'000 + (after - anchored) / 1000;
        EXPECT_LE(before, read + slack) << "reading " << i;
        EXPECT_LE(read, after + slack) << "reading " << i;
    }
    EXPECT_GT(counted, 0) << "no anchor paired the TSC with clock_gettime";
}

#endif

}  // namespace
}  // namespace rivet::net
