#include <rivet/response.hpp>

#include <gtest/gtest.h>

#include <memory>
#include <stdexcept>
#include <string>

using rivet::Response;

namespace {

TEST(Response, RefusesResponseSplitting) {
    Response res;
    EXPECT_THROW(res.header("X-A", "a\r\nSet-Cookie: x=1"), std::invalid_argument);
    EXPECT_THROW(res.header("X-A", std::string("a\0b", 3)), std::invalid_argument);
    EXPECT_THROW(res.header("Bad Name", "v"), std::invalid_argument);
    EXPECT_THROW(res.header("Content-Length", "5"), std::invalid_argument);
    EXPECT_THROW(res.content_type("text/html\nX: y"), std::invalid_argument);
    EXPECT_THROW(res.status(42), std::invalid_argument);
    res.header("X-Fine", "value with spaces and \t tab");
    EXPECT_EQ(res.header("x-fine"), "value with spaces and \t tab");
}

// Values are checked eight bytes at a time (the last block overlapping the one before), four
// and four below eight, byte by byte below four: a forbidden byte is found at every offset of
// values of every length up to 27, and every other byte, control characters below 0x0E
// included, passes wherever it is.
TEST(Response, FindsCrLfAndNulAtEveryOffsetOfAValue) {
    for (char forbidden : {'\r', '\n', '\0'}) {
        for (size_t n = 1; n <= 27; ++n) {
            for (size_t at = 0; at < n; ++at) {
                std::string value(n, 'v');
                value[at] = forbidden;
                Response res;
                EXPECT_THROW(res.header("X-Long", value), std::invalid_argument)
                    << int(forbidden) << " at " << at << " of " << n;
                EXPECT_THROW(res.content_type(value), std::invalid_argument) << at << " of " << n;
            }
        }
    }
    for (size_t n = 1; n <= 27; ++n) {
        std::string value;
        for (size_t i = 0; i < n; ++i) value += char(i % 2 ? 0x0e : 0x0c);  // around CR
        Response res;
        res.header("X-Near", value);
        EXPECT_EQ(res.header("X-Near"), value);
    }
    std::string allowed;
    for (int c = 1; c < 256; ++c)
        if (c != '\r' && c != '\n') allowed += char(c);
    Response res;
    res.header("X-All", allowed);
    EXPECT_EQ(res.header("X-All"), allowed);
    res.header("X-Short", "\x0b\x0c\x01");
    EXPECT_EQ(res.header("X-Short"), "\x0b\x0c\x01");
}

TEST(Response, ReservedNamesAreFoundWhateverTheirCase) {
    Response res;
    for (const char* name : {"date", "CONTENT-LENGTH", "Transfer-encoding"})
        EXPECT_THROW(res.header(name, "x"), std::invalid_argument) << name;
    res.header("content-TYPE", "text/x-test");
    EXPECT_EQ(res.content_type(), "text/x-test");
    EXPECT_TRUE(res.headers().empty());  // kept apart, not as a field
    res.header("connection", "Close");
    EXPECT_TRUE(res.close_connection());
    res.header("Dates", "x");     // a name of another length is a field like any
    res.header("ETag", "\"1\"");  // as long as Date
    EXPECT_EQ(res.headers().size(), 2u);
}

TEST(Response, SharedBodyIsReadInPlaceAndCopiedOnlyToChange) {
    auto page = std::make_shared<const std::string>("<p>cached</p>");
    Response res;
    res.body(page, "text/html");
    EXPECT_EQ(res.body().data(), page->data());  // the owner's bytes, not a copy
    EXPECT_EQ(res.content_type(), "text/html");
    EXPECT_EQ(page.use_count(), 2);  // the response keeps them alive
    res.mutable_body().append("!");
    EXPECT_EQ(res.body(), "<p>cached</p>!");
    EXPECT_EQ(*page, "<p>cached</p>");  // the owner's stay as they were
    EXPECT_EQ(page.use_count(), 1);

    res.body(page, "text/html");
    res.text("replaced");
    EXPECT_EQ(res.body(), "replaced");
    EXPECT_EQ(page.use_count(), 1);
}

TEST(Response, ContentTypeSurvivesMoves) {
    Response a;
    a.content_type("application/vnd.example+json");  // run-time string, not a literal
    Response b = std::move(a);
    Response c;
    c = b;
    EXPECT_EQ(b.content_type(), "application/vnd.example+json");
    EXPECT_EQ(c.content_type(), "application/vnd.example+json");
}

TEST(Response, ACommonTypeBuiltAtRunTimeOutlivesItsString) {
    Response res;
    {
        std::string type = std::string("application/") + "json";
        res.body(std::string_view("{}"), type);
        type.assign(type.size(), 'x');  // the caller's bytes change, then go
    }
    EXPECT_EQ(res.content_type(), "application/json");
    Response copy = res;
    res.content_type("text/x-other");
    EXPECT_EQ(copy.content_type(), "application/json");
    EXPECT_EQ(res.content_type(), "text/x-other");
}

}  // namespace

namespace {

TEST(Response, RemoveHeaderDropsEveryFieldOfThatName) {
    Response res;
    res.header("Vary", "Origin").header("X-Keep", "1").header("vary", "Cookie");
    res.remove_header("VARY");
    EXPECT_EQ(res.header("Vary"), "");
    ASSERT_EQ(res.headers().size(), 1u);
    EXPECT_EQ(res.headers()[0].name, "X-Keep");
    res.remove_header("Absent");
    EXPECT_EQ(res.headers().size(), 1u);
}

}  // namespace
