// net::FineClock: a reading agrees with clock_gettime taken around it, whichever source; the TSC
// is counted only once its rate is measured. Each check brackets a reading between two
// clock_gettime reads, so a preemption anywhere only widens the bracket: the checks hold on a
// busy machine.
#include "net/fine_clock.hpp"

#include <gtest/gtest.h>

#include <chrono>
#include <thread>

#include "core/clock.hpp"

namespace rivet::net {
namespace {

using namespace std::chrono_literals;

// Anchors until the clock counts the TSC; false if it has not within a generous deadline.
bool anchor_until_counting(FineClock& clock) {
    const auto deadline = std::chrono::steady_clock::now() + 20s;
    while (std::chrono::steady_clock::now() < deadline) {
        clock.anchor();
        if (clock.counting_tsc()) return true;
        std::this_thread::sleep_for(1ms);
    }
    return false;
}

// Spins for about `ns` so that a reading lies well after its anchor.
void spin_for(uint64_t ns) {
    const uint64_t until = core::monotonic_ns() + ns;
    while (core::monotonic_ns() < until) {
    }
}

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

TEST(FineClockTest, TscIsCountedOnlyOnceItsRateIsMeasured) {
    if (FineClock::best_source() != FineClock::Source::Tsc)
        GTEST_SKIP() << "this machine's kernel does not keep time with the TSC";
    FineClock clock(FineClock::Source::Tsc);
    clock.anchor();
    EXPECT_FALSE(clock.counting_tsc()) << "one anchor cannot have measured a rate";
    // Before the rate is known, a reading is clock_gettime's.
    const uint64_t before = core::monotonic_ns();
    const uint64_t read = clock.read();
    EXPECT_LE(before, read);
    EXPECT_LE(read, core::monotonic_ns());
    EXPECT_TRUE(anchor_until_counting(clock));
}

// A TSC reading, up to 2 ms after its anchor, lies between clock_gettime reads taken around it,
// within 5 µs plus 0.1% of the time since the anchor: the anchor's pairing error and the rate's
// error (measured over 20 ms or more; NTP may slew CLOCK_MONOTONIC by up to 0.05%).
TEST(FineClockTest, TscReadingsAgreeWithClockGettime) {
    if (FineClock::best_source() != FineClock::Source::Tsc)
        GTEST_SKIP() << "this machine's kernel does not keep time with the TSC";
    FineClock clock(FineClock::Source::Tsc);
    ASSERT_TRUE(anchor_until_counting(clock));
    int counted = 0;
    for (int i = 0; i < 400; ++i) {
        const uint64_t anchored = clock.anchor();
        spin_for(uint64_t(i % 40) * 50'000);
        const uint64_t before = core::monotonic_ns();
        const uint64_t read = clock.read();
        const uint64_t after = core::monotonic_ns();
        counted += clock.counting_tsc();
        const uint64_t slack = 5'000 + (before - anchored) / 1000;
        EXPECT_LE(before, read + slack) << "reading " << i;
        EXPECT_LE(read, after + slack) << "reading " << i;
    }
    EXPECT_GT(counted, 0) << "no anchor paired the TSC with clock_gettime";
}

}  // namespace
}  // namespace rivet::net
