#include "app/static/byte_ranges.hpp"

#include <gtest/gtest.h>

#include <string>
#include <utility>
#include <vector>

namespace rivet::files {
namespace {

using Kind = RangeRequest::Kind;
using Pairs = std::vector<std::pair<uint64_t, uint64_t>>;

Pairs pairs(const RangeRequest& r) {
    Pairs out;
    for (auto& b : r.ranges) out.emplace_back(b.first, b.last);
    return out;
}

TEST(ByteRanges, SingleForms) {
    auto r = parse_ranges("bytes=0-99", 1000, 16);
    EXPECT_EQ(r.kind, Kind::Partial);
    EXPECT_EQ(pairs(r), (Pairs{{0, 99}}));
    EXPECT_EQ(pairs(parse_ranges("bytes=500-", 1000, 16)), (Pairs{{500, 999}}));  // open
    EXPECT_EQ(pairs(parse_ranges("bytes=-100", 1000, 16)), (Pairs{{900, 999}}));  // suffix
    EXPECT_EQ(pairs(parse_ranges("bytes=-5000", 1000, 16)), (Pairs{{0, 999}}));   // whole
    EXPECT_EQ(pairs(parse_ranges("bytes=990-5000", 1000, 16)), (Pairs{{990, 999}}));
    EXPECT_EQ(pairs(parse_ranges("bytes=999-999", 1000, 16)), (Pairs{{999, 999}}));
    EXPECT_EQ(pairs(parse_ranges("Bytes = 1-2", 1000, 16)), (Pairs{{1, 2}}));
    EXPECT_EQ(pairs(parse_ranges("bytes=0-18446744073709551616", 10, 16)), (Pairs{{0, 9}}));
}

TEST(ByteRanges, SeveralKeepTheirOrderUnlessTheyOverlap) {
    auto r = parse_ranges("bytes=500-599, 0-99", 1000, 16);
    EXPECT_EQ(r.kind, Kind::Partial);
    EXPECT_EQ(pairs(r), (Pairs{{500, 599}, {0, 99}}));
    // Overlapping (and near) ranges merge, sorted.
    EXPECT_EQ(pairs(parse_ranges("bytes=50-150,0-99", 1000, 16)), (Pairs{{0, 150}}));
    EXPECT_EQ(pairs(parse_ranges("bytes=0-9,20-29", 1000, 16)), (Pairs{{0, 29}}));
    EXPECT_EQ(pairs(parse_ranges("bytes=0-9,500-509,-10", 1000, 16)),
              (Pairs{{0, 9}, {500, 509}, {990, 999}}));
    EXPECT_EQ(pairs(parse_ranges("bytes=0-,0-,0-,0-", 1000, 1)), (Pairs{{0, 999}}));
    // Empty list elements are allowed.
    EXPECT_EQ(pairs(parse_ranges("bytes=0-1, ,", 1000, 16)), (Pairs{{0, 1}}));
}

TEST(ByteRanges, TooManyRangesGetTheWholeFile) {
    std::string many = "bytes=";
    for (int i = 0; i < 20; ++i)
        many += std::to_string(i * 200) + "-" + std::to_string(i * 200) + ",";
    EXPECT_EQ(parse_ranges(many, 100000, 16).kind, Kind::Whole);
    EXPECT_EQ(parse_ranges(many, 100000, 20).kind, Kind::Partial);
    // A thousand copies of the same range cost one range, not a thousand times the file.
    std::string same = "bytes=0-999";
    for (int i = 0; i < 1000; ++i) same += ",0-999";
    auto r = parse_ranges(same, 1000, 16);
    EXPECT_EQ(pairs(r), (Pairs{{0, 999}}));
}

TEST(ByteRanges, Unsatisfiable) {
    EXPECT_EQ(parse_ranges("bytes=1000-", 1000, 16).kind, Kind::Unsatisfiable);
    EXPECT_EQ(parse_ranges("bytes=2000-3000", 1000, 16).kind, Kind::Unsatisfiable);
    EXPECT_EQ(parse_ranges("bytes=-0", 1000, 16).kind, Kind::Unsatisfiable);
    EXPECT_EQ(parse_ranges("bytes=0-", 0, 16).kind, Kind::Unsatisfiable);
    EXPECT_EQ(parse_ranges("bytes=-5", 0, 16).kind, Kind::Unsatisfiable);
    // One satisfiable range is enough; the others are dropped.
    EXPECT_EQ(pairs(parse_ranges("bytes=2000-,5-6", 1000, 16)), (Pairs{{5, 6}}));
}

TEST(ByteRanges, InvalidFieldsAreIgnored) {
    for (const char* h :
         {"", "bytes", "bytes=", "items=0-1", "bytes=a-b", "bytes=5-1", "bytes=1-2-3", "bytes=--1",
          "bytes=0-1,x", "bytes=+1-2", "bytes=1", "bytes=0x1-2", "bytes= - "})
        EXPECT_EQ(parse_ranges(h, 1000, 16).kind, Kind::Whole) << h;
}

}  // namespace
}  // namespace rivet::files
