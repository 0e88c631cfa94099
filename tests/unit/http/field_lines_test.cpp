// http::FieldLines: "Name: value\r\n" lines read back as fields, as HTTP/2 and an owned Reply
// read a response's fields and an Answer's extra fields.
#include "http/field_lines.hpp"

#include <gtest/gtest.h>

#include <string>
#include <utility>
#include <vector>

namespace {

using Fields = std::vector<std::pair<std::string, std::string>>;

Fields read(std::string_view text) {
    Fields out;
    for (rivet::http::Header h : rivet::http::FieldLines{text})
        out.emplace_back(std::string(h.name), std::string(h.value));
    return out;
}

TEST(FieldLines, ReadsEachLineInOrder) {
    EXPECT_EQ(read(""), Fields{});
    EXPECT_EQ(read(std::string_view{}), Fields{});
    EXPECT_TRUE(rivet::http::FieldLines{}.empty());
    EXPECT_EQ(read("ETag: \"x\"\r\n"), (Fields{{"ETag", "\"x\""}}));
    EXPECT_EQ(read("A: 1\r\nB: two words\r\nA: 3\r\n"),
              (Fields{{"A", "1"}, {"B", "two words"}, {"A", "3"}}));
    // An empty value, no space after the colon, a tab, and a colon inside the value.
    EXPECT_EQ(
        read("X-Empty: \r\nX-Tight:v\r\nX-Tab:\tt\r\nLocation: http://a:1/\r\n"),
        (Fields{{"X-Empty", ""}, {"X-Tight", "v"}, {"X-Tab", "t"}, {"Location", "http://a:1/"}}));
    // Not written by rivet: a last line without its CRLF still reads as a field; a line
    // without a colon is no field, wherever it is.
    EXPECT_EQ(read("A: 1\r\nB: 2"), (Fields{{"A", "1"}, {"B", "2"}}));
    EXPECT_EQ(read("junk\r\nA: 1\r\n\r\nmore junk\r\nB: 2\r\njunk"),
              (Fields{{"A", "1"}, {"B", "2"}}));
    EXPECT_EQ(read("junk"), Fields{});
}

TEST(FieldLines, ManyLinesOfEveryLength) {
    std::string text;
    Fields want;
    for (size_t i = 0; i < 300; ++i) {
        want.emplace_back("X-" + std::to_string(i), std::string(i, 'v'));
        text += want.back().first + ": " + want.back().second + "\r\n";
    }
    EXPECT_EQ(read(text), want);
}

}  // namespace
