#include "app/static/conditional.hpp"

#include <gtest/gtest.h>

#include "app/static/http_date.hpp"

namespace rivet::files {
namespace {

constexpr int64_t kMtime = 784111777;  // Sun, 06 Nov 1994 08:49:37 GMT
constexpr int64_t kNow = 1'700'000'000;
const Validators kV{"\"abc\"", kMtime};

Precondition eval(Conditions c, bool get = true) {
    return evaluate(c, kV, get, kNow);
}

TEST(HttpDate, ParsesTheThreeForms) {
    EXPECT_EQ(parse_http_date("Sun, 06 Nov 1994 08:49:37 GMT"), kMtime);
    EXPECT_EQ(parse_http_date("Sunday, 06-Nov-94 08:49:37 GMT"), kMtime);
    EXPECT_EQ(parse_http_date("Sun Nov  6 08:49:37 1994"), kMtime);
    EXPECT_EQ(parse_http_date("Thu, 01 Jan 1970 00:00:00 GMT"), 0);
    EXPECT_EQ(parse_http_date("Tue, 29 Feb 2028 23:59:59 GMT"), 1835481599);
    for (const char* bad :
         {"", "yesterday", "Sun, 06 Nov 1994 08:49:37 UTC", "Sun, 6 Nov 1994 08:49:37 GMT",
          "Sun, 06 Nov 1994 25:49:37 GMT", "Sun, 06 Foo 1994 08:49:37 GMT",
          "Sun, 06 Nov 1994 08:49:37 GMT x", "784111777"})
        EXPECT_FALSE(parse_http_date(bad)) << bad;
}

TEST(EtagList, WeakAndStrongComparison) {
    EXPECT_TRUE(etag_list_matches("\"abc\"", "\"abc\"", false));
    EXPECT_TRUE(etag_list_matches("\"x\", \"abc\"", "\"abc\"", false));
    EXPECT_TRUE(etag_list_matches("*", "\"abc\"", false));
    EXPECT_FALSE(etag_list_matches("W/\"abc\"", "\"abc\"", false));  // strong: W/ never matches
    EXPECT_TRUE(etag_list_matches("W/\"abc\"", "\"abc\"", true));
    EXPECT_TRUE(etag_list_matches("\"a,b\", \"abc\"", "\"abc\"", true));  // commas inside tags
    EXPECT_FALSE(etag_list_matches("\"abcd\"", "\"abc\"", true));
    EXPECT_FALSE(etag_list_matches("abc", "\"abc\"", true));  // unquoted: malformed
    EXPECT_FALSE(etag_list_matches("\"abc", "\"abc\"", true));
}

TEST(Preconditions, IfNoneMatchGives304ForGetAnd412Otherwise) {
    EXPECT_EQ(eval({.if_none_match = "\"abc\""}), Precondition::NotModified);
    EXPECT_EQ(eval({.if_none_match = "W/\"abc\""}), Precondition::NotModified);
    EXPECT_EQ(eval({.if_none_match = "*"}), Precondition::NotModified);
    EXPECT_EQ(eval({.if_none_match = "\"other\""}), Precondition::Proceed);
    EXPECT_EQ(eval({.if_none_match = "\"abc\""}, false), Precondition::Failed);
}

TEST(Preconditions, IfNoneMatchTakesPrecedenceOverIfModifiedSince) {
    // The tag differs: the date (which alone would give 304) is not even looked at.
    EXPECT_EQ(
        eval({.if_none_match = "\"other\"", .if_modified_since = "Sun, 06 Nov 1994 08:49:37 GMT"}),
        Precondition::Proceed);
}

TEST(Preconditions, IfModifiedSince) {
    EXPECT_EQ(eval({.if_modified_since = "Sun, 06 Nov 1994 08:49:37 GMT"}),
              Precondition::NotModified);
    EXPECT_EQ(eval({.if_modified_since = "Mon, 07 Nov 1994 08:49:37 GMT"}),
              Precondition::NotModified);
    EXPECT_EQ(eval({.if_modified_since = "Sun, 06 Nov 1994 08:49:36 GMT"}), Precondition::Proceed);
    EXPECT_EQ(eval({.if_modified_since = "garbage"}), Precondition::Proceed);
    // A date in the future is invalid (RFC 9110 §13.1.3): ignored.
    EXPECT_EQ(eval({.if_modified_since = "Fri, 01 Jan 2100 00:00:00 GMT"}), Precondition::Proceed);
    // Only for GET and HEAD.
    EXPECT_EQ(eval({.if_modified_since = "Sun, 06 Nov 1994 08:49:37 GMT"}, false),
              Precondition::Proceed);
}

TEST(Preconditions, IfMatchAndIfUnmodifiedSince) {
    EXPECT_EQ(eval({.if_match = "\"abc\""}), Precondition::Proceed);
    EXPECT_EQ(eval({.if_match = "*"}), Precondition::Proceed);
    EXPECT_EQ(eval({.if_match = "\"other\""}), Precondition::Failed);
    EXPECT_EQ(eval({.if_match = "W/\"abc\""}), Precondition::Failed);  // strong comparison
    EXPECT_EQ(eval({.if_unmodified_since = "Sun, 06 Nov 1994 08:49:36 GMT"}), Precondition::Failed);
    EXPECT_EQ(eval({.if_unmodified_since = "Sun, 06 Nov 1994 08:49:37 GMT"}),
              Precondition::Proceed);
    // If-Match wins over If-Unmodified-Since (which would fail).
    EXPECT_EQ(eval({.if_match = "\"abc\"", .if_unmodified_since = "Thu, 01 Jan 1970 00:00:00 GMT"}),
              Precondition::Proceed);
    // 412 comes before 304.
    EXPECT_EQ(eval({.if_match = "\"other\"", .if_none_match = "\"abc\""}), Precondition::Failed);
}

TEST(IfRange, TagOrExactDate) {
    EXPECT_TRUE(if_range_holds("", kV));
    EXPECT_TRUE(if_range_holds("\"abc\"", kV));
    EXPECT_FALSE(if_range_holds("\"old\"", kV));
    EXPECT_FALSE(if_range_holds("W/\"abc\"", kV));  // a weak tag never allows a range
    EXPECT_TRUE(if_range_holds("Sun, 06 Nov 1994 08:49:37 GMT", kV));
    EXPECT_FALSE(if_range_holds("Mon, 07 Nov 1994 08:49:37 GMT", kV));  // exact match only
    EXPECT_FALSE(if_range_holds("garbage", kV));
}

}  // namespace
}  // namespace rivet::files
