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

}  // namespace

namespace {

TEST(Response, RemoveHeaderDropsEveryFieldOfThatName) {
    Response res;
    res.header("Vary", "Origin").header("X-Keep", "1").header("vary", "Cookie");
    res.remove_header("VARY");
    EXPECT_EQ(res.header("Vary"), "");
    ASSERT_EQ(res.headers().size(), 1u);
    EXPECT_EQ(res.headers()[0].first, "X-Keep");
    res.remove_header("Absent");
    EXPECT_EQ(res.headers().size(), 1u);
}

}  // namespace
