// Pace: the minimum body rate, judged over windows of the body timeout; paused time (a
// streamed body's handler that does not ask) is left out.
#include "engine/pace.hpp"

#include <gtest/gtest.h>

namespace rivet::engine {
namespace {

constexpr uint64_t kRate = 100;     // bytes a second
constexpr uint64_t kWindow = 2000;  // ms: 200 bytes a window

TEST(Pace, AWindowThatBringsTheRateStartsTheNext) {
    Pace p;
    p.start(1000);
    EXPECT_EQ(p.window_end_ms(kRate, kWindow), 3000u);
    EXPECT_TRUE(p.judge(2999, kRate, kWindow));  // not over yet: nothing judged
    p.add(200);
    EXPECT_TRUE(p.judge(3000, kRate, kWindow));
    EXPECT_EQ(p.window_end_ms(kRate, kWindow), 5000u);
    p.add(199);  // one byte short of the next window's quota
    EXPECT_FALSE(p.judge(5000, kRate, kWindow));
}

TEST(Pace, RateZeroNeverEnds) {
    Pace p;
    p.start(0);
    EXPECT_EQ(p.window_end_ms(0, kWindow), UINT64_MAX);
    EXPECT_TRUE(p.judge(1'000'000, 0, kWindow));
}

TEST(Pace, PausedTimeIsLeftOut) {
    Pace p;
    p.start(1000);
    p.pause(1500);
    p.pause(1700);  // a second pause changes nothing
    p.resume(11'500);
    EXPECT_EQ(p.window_end_ms(kRate, kWindow), 13'000u);
    p.add(50);
    EXPECT_FALSE(p.judge(13'000, kRate, kWindow));
}

}  // namespace
}  // namespace rivet::engine
