// rivet::ResponseHeaders: fields kept as the lines HTTP/1 sends, inline up to a room of 192 bytes
// and 8 lines, on the heap past either; what is read back, copied, moved and removed is the same
// on both sides of those limits.
#include <rivet/response.hpp>

#include <gtest/gtest.h>

#include <stdexcept>
#include <string>
#include <utility>
#include <vector>

#include "app/request/response_access.hpp"

using rivet::HeaderField;
using rivet::Response;

namespace {

using Fields = std::vector<std::pair<std::string, std::string>>;

std::string lines_of(const Fields& fields) {
    std::string out;
    for (auto& [name, value] : fields) out += name + ": " + value + "\r\n";
    return out;
}

// Everything the read side says agrees with `want`.
void expect_fields(const Response& res, const Fields& want) {
    const rivet::ResponseHeaders& h = res.headers();
    ASSERT_EQ(h.size(), want.size());
    EXPECT_EQ(h.empty(), want.empty());
    size_t i = 0;
    for (HeaderField f : h) {
        EXPECT_EQ(f.name, want[i].first) << i;
        EXPECT_EQ(f.value, want[i].second) << i;
        EXPECT_EQ(h[i].name, want[i].first) << i;
        EXPECT_EQ(h[i].value, want[i].second) << i;
        ++i;
    }
    EXPECT_EQ(i, want.size());
    EXPECT_EQ(rivet::detail::ResponseAccess::field_lines(res), lines_of(want));
}

// n fields of `value_size` bytes each, every value different.
Fields make_fields(size_t n, size_t value_size) {
    Fields f;
    for (size_t i = 0; i < n; ++i) {
        std::string value(value_size, char('a' + i % 26));
        if (!value.empty()) value[0] = char('A' + i % 26);
        f.emplace_back("X-F" + std::to_string(i), value);
    }
    return f;
}

Response with(const Fields& fields) {
    Response res;
    for (auto& [name, value] : fields) res.header(name, value);
    return res;
}

TEST(ResponseHeaders, ReadBackInOrderAsLines) {
    Response res;
    expect_fields(res, {});
    res.header("X-One", "1").header("Set-Cookie", "a=1").header("set-cookie", "b=2");
    res.header("X-Empty", "");
    expect_fields(res,
                  {{"X-One", "1"}, {"Set-Cookie", "a=1"}, {"set-cookie", "b=2"}, {"X-Empty", ""}});
    EXPECT_EQ(res.headers().find("SET-COOKIE"), "a=1");  // the first, any case
    EXPECT_EQ(res.header("x-one"), "1");
    EXPECT_TRUE(res.headers().contains("x-empty"));
    EXPECT_FALSE(res.headers().contains("X-On"));
    EXPECT_EQ(res.headers().find("X-None"), "");
}

// Fields whose text ends just under, at and past the 192-byte room, and counts on both sides of
// the 8 inline lines: each one reads back, and so do copies and moves of the response.
TEST(ResponseHeaders, EveryCountAndSizeAroundTheRoom) {
    for (size_t n : {1, 2, 7, 8, 9, 17, 40}) {
        for (size_t value_size : {0, 1, 10, 14, 15, 16, 40, 183, 184, 185, 200, 1000}) {
            SCOPED_TRACE(std::to_string(n) + " fields of " + std::to_string(value_size));
            const Fields want = make_fields(n, value_size);
            Response res = with(want);
            expect_fields(res, want);

            Response copy = res;
            expect_fields(copy, want);
            expect_fields(res, want);

            Response moved = std::move(copy);
            expect_fields(moved, want);
            expect_fields(copy, {});  // NOLINT: a moved-from Response is empty, and usable
            copy.header("X-After", "move");
            expect_fields(copy, {{"X-After", "move"}});

            Response assigned;
            assigned.header("X-Before", std::string(300, 'z'));  // spilled, then replaced
            assigned = res;
            expect_fields(assigned, want);
            Response move_assigned;
            move_assigned.header("X-Before", "small");
            move_assigned = std::move(assigned);
            expect_fields(move_assigned, want);

            Response& self = res;
            res = self;
            expect_fields(res, want);
        }
    }
}

// A field appended after the text moved to the heap lands after the others.
TEST(ResponseHeaders, AppendingPastTheRoomKeepsTheOrder) {
    Fields want;
    Response res;
    for (size_t i = 0; i < 30; ++i) {
        want.emplace_back("X-" + std::to_string(i), std::string(i * 5, 'v'));
        res.header(want.back().first, want.back().second);
        expect_fields(res, want);
    }
}

// A name or value that is a view of the same response's fields, as the fields move from the
// room to the heap and the heap grows: copied whole before the old bytes are let go (ASan sees
// a read of freed memory otherwise).
TEST(ResponseHeaders, AFieldCopiedFromTheSameResponse) {
    Response res;
    const std::string big(150, 'b');
    res.header("X-Big", big);
    Fields want = {{"X-Big", big}};
    for (int i = 0; i < 60; ++i) {
        res.header("X-Copy", res.header("X-Big"));
        want.emplace_back("X-Copy", big);
        res.header(res.headers()[0].name, res.headers()[size_t(i)].value);
        want.emplace_back("X-Big", want[size_t(i)].second);
    }
    expect_fields(res, want);
}

TEST(ResponseHeaders, OverTheLimitThrowsAndKeepsWhatItHad) {
    Response res;
    res.header("X-Kept", "yes");
    const size_t max = rivet::ResponseHeaders::max_bytes();
    // "X: " + value + "\r\n" is the value's size plus 5.
    EXPECT_THROW(res.header("X", std::string(max - 5 - 13 + 1, 'v')), std::length_error);
    expect_fields(res, {{"X-Kept", "yes"}});
    res.header("X", std::string(max - 5 - 13, 'v'));  // "X-Kept: yes\r\n" is 13: exactly full
    EXPECT_EQ(res.headers().size(), 2u);
    EXPECT_THROW(res.header("Y", ""), std::length_error);
    EXPECT_EQ(res.headers().size(), 2u);
}

TEST(ResponseHeaders, RemoveTakesEveryFieldOfTheNameAndKeepsTheRest) {
    for (size_t value_size : {3, 100}) {
        Fields all = make_fields(12, value_size);
        for (size_t i = 0; i < all.size(); i += 3) all[i].first = i % 2 ? "vary" : "Vary";
        Response res = with(all);
        res.remove_header("VARY");
        Fields kept;
        for (auto& f : all)
            if (f.first != "Vary" && f.first != "vary") kept.push_back(f);
        expect_fields(res, kept);
        res.remove_header("X-Nothing");
        expect_fields(res, kept);
        res.header("Vary", "Accept-Encoding");
        kept.emplace_back("Vary", "Accept-Encoding");
        expect_fields(res, kept);
    }
}

TEST(ResponseHeaders, EqualWhenTheSameFieldsInTheSameOrder) {
    const Fields f = make_fields(10, 30);
    EXPECT_EQ(with(f).headers(), with(f).headers());
    Fields reordered = f;
    std::swap(reordered[0], reordered[1]);
    EXPECT_FALSE(with(f).headers() == with(reordered).headers());
    Fields fewer(f.begin(), f.end() - 1);
    EXPECT_FALSE(with(f).headers() == with(fewer).headers());
}

}  // namespace
