// HeapTrim: trims once when traffic pauses, never again while quiet, and every
// kBusyTicksBetweenTrims ticks under steady traffic.
#include "engine/heap_trim.hpp"

#include <gtest/gtest.h>

using rivet::engine::HeapTrim;
using Outcome = HeapTrim::Outcome;

TEST(HeapTrim, QuietFromTheStartNeverTrims) {
    HeapTrim trim;
    for (int i = 0; i < 30; ++i) EXPECT_EQ(trim.tick(0), Outcome::Kept);
}

TEST(HeapTrim, TrimsOnceWhenTrafficPauses) {
    HeapTrim trim;
    EXPECT_EQ(trim.tick(100), Outcome::Kept);  // traffic
    EXPECT_EQ(trim.tick(250), Outcome::Kept);
    EXPECT_EQ(trim.tick(250), Outcome::Trimmed);  // the first quiet tick
    for (int i = 0; i < 30; ++i) EXPECT_EQ(trim.tick(250), Outcome::Kept);
    EXPECT_EQ(trim.tick(300), Outcome::Kept);  // traffic again, then quiet: once more
    EXPECT_EQ(trim.tick(300), Outcome::Trimmed);
}

TEST(HeapTrim, SteadyTrafficIsTrimmedNowAndThen) {
    HeapTrim trim;
    uint64_t traffic = 0;
    int trims = 0;
    for (unsigned i = 0; i < 3 * HeapTrim::kBusyTicksBetweenTrims; ++i)
        trims += trim.tick(++traffic) == Outcome::Trimmed;
    EXPECT_EQ(trims, 3);
}
