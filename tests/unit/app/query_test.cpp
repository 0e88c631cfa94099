#include "app/request/query.hpp"

#include <gtest/gtest.h>

#include <string>

using rivet::app::form_value;
using rivet::app::parse_query;
using rivet::app::percent_decode;

namespace {

using Pairs = std::vector<std::pair<std::string, std::string>>;

}  // namespace

TEST(PercentDecode, Basics) {
    EXPECT_EQ(percent_decode("", false), "");
    EXPECT_EQ(percent_decode("plain", false), "plain");
    EXPECT_EQ(percent_decode("a%20b", false), "a b");
    EXPECT_EQ(percent_decode("%2F%2f", false), "//");
    EXPECT_EQ(percent_decode("100%25", false), "100%");
    EXPECT_EQ(percent_decode("%41%42C", false), "ABC");
}

TEST(PercentDecode, Plus) {
    EXPECT_EQ(percent_decode("a+b", true), "a b");
    EXPECT_EQ(percent_decode("a+b", false), "a+b");
    EXPECT_EQ(percent_decode("a%2Bb", true), "a+b");
}

TEST(PercentDecode, Utf8Bytes) {
    EXPECT_EQ(percent_decode("caf%C3%A9", false), "caf\xC3\xA9");
    EXPECT_EQ(percent_decode("%E2%82%AC", false), "\xE2\x82\xAC");
    // Raw non-ASCII bytes pass through unchanged; no UTF-8 validation is done.
    EXPECT_EQ(percent_decode("\xFF%FF", false), "\xFF\xFF");
}

TEST(PercentDecode, Nul) {
    auto d = percent_decode("a%00b", false);
    ASSERT_TRUE(d);
    EXPECT_EQ(d->size(), 3u);
    EXPECT_EQ(*d, std::string("a\0b", 3));
}

TEST(PercentDecode, Malformed) {
    for (const char* s : {"%", "%4", "a%", "%zz", "%4g", "%g4", "ok%2", "%%41", "%-1", "% 1"})
        EXPECT_FALSE(percent_decode(s, true).has_value()) << s;
}

TEST(ParseQuery, Pairs) {
    EXPECT_EQ(parse_query("a=1&b=2&c"), (Pairs{{"a", "1"}, {"b", "2"}, {"c", ""}}));
    EXPECT_EQ(parse_query("q=hello+world&x=%26%3D"), (Pairs{{"q", "hello world"}, {"x", "&="}}));
    EXPECT_EQ(parse_query("a=b=c"), (Pairs{{"a", "b=c"}}));
    EXPECT_EQ(parse_query("na%6De=v"), (Pairs{{"name", "v"}}));
    EXPECT_EQ(parse_query("first+name=Ann"), (Pairs{{"first name", "Ann"}}));
}

TEST(ParseQuery, EmptyPiecesKeysAndValues) {
    EXPECT_EQ(parse_query(""), Pairs{});
    EXPECT_EQ(parse_query("&&&"), Pairs{});
    EXPECT_EQ(parse_query("a=1&&b=2&"), (Pairs{{"a", "1"}, {"b", "2"}}));
    EXPECT_EQ(parse_query("=x"), (Pairs{{"", "x"}}));
    EXPECT_EQ(parse_query("="), (Pairs{{"", ""}}));
    EXPECT_EQ(parse_query("a=&b"), (Pairs{{"a", ""}, {"b", ""}}));
}

TEST(ParseQuery, RepeatedKeysKeptInOrder) {
    EXPECT_EQ(parse_query("t=1&u=0&t=2&t=3"),
              (Pairs{{"t", "1"}, {"u", "0"}, {"t", "2"}, {"t", "3"}}));
}

TEST(ParseQuery, MalformedKeptRaw) {
    EXPECT_EQ(parse_query("a=%zz&b=%41"), (Pairs{{"a", "%zz"}, {"b", "A"}}));
    EXPECT_EQ(parse_query("%=x+y"), (Pairs{{"%", "x y"}}));
    EXPECT_EQ(parse_query("k=50%"), (Pairs{{"k", "50%"}}));
}

TEST(ParseQuery, NulAndUtf8) {
    EXPECT_EQ(parse_query("n=%00&s=%C3%BC"),
              (Pairs{{"n", std::string(1, '\0')}, {"s", "\xC3\xBC"}}));
}

TEST(FormValue, FirstMatchDecoded) {
    std::string_view q = "name=J%C3%B6rg+M&age=7&name=second&flag&e=";
    EXPECT_EQ(form_value(q, "name"), "J\xC3\xB6rg M");
    EXPECT_EQ(form_value(q, "age"), "7");
    EXPECT_EQ(form_value(q, "flag"), "");
    EXPECT_EQ(form_value(q, "e"), "");
    EXPECT_EQ(form_value(q, "missing"), std::nullopt);
    EXPECT_EQ(form_value(q, "nam"), std::nullopt);
    EXPECT_EQ(form_value("", "a"), std::nullopt);
}

TEST(FormValue, EncodedKeysAndMalformed) {
    EXPECT_EQ(form_value("first+name=Ann", "first name"), "Ann");
    EXPECT_EQ(form_value("a%5B%5D=1&a[]=2", "a[]"), "1");
    EXPECT_EQ(form_value("x=%zz", "x"), "%zz");
    EXPECT_EQ(form_value("=v", ""), "v");
}
