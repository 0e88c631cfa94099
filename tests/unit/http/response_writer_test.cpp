#include "http/response_writer.hpp"

#include <gtest/gtest.h>

#include <ctime>

using rivet::http::DateCache;
using rivet::http::Framing;
using rivet::http::Response;

namespace {

constexpr std::string_view kDate = "Date: X\r\nServer: rivet\r\n";

TEST(DateCache, FormatsImfFixdate) {
    char out[29];
    rivet::http::format_http_date(784111777, out);  // RFC 9110's example instant
    EXPECT_EQ(std::string_view(out, 29), "Sun, 06 Nov 1994 08:49:37 GMT");
    rivet::http::format_http_date(0, out);
    EXPECT_EQ(std::string_view(out, 29), "Thu, 01 Jan 1970 00:00:00 GMT");
    rivet::http::format_http_date(4102444799, out);
    EXPECT_EQ(std::string_view(out, 29), "Thu, 31 Dec 2099 23:59:59 GMT");
}

TEST(DateCache, ReformatsOnlyWhenTheSecondChanges) {
    DateCache cache;
    std::string a(cache.block(784111777));
    EXPECT_EQ(a, "Date: Sun, 06 Nov 1994 08:49:37 GMT\r\nServer: rivet\r\n");
    EXPECT_EQ(cache.block(784111777).data(), cache.block(784111777).data());
    EXPECT_EQ(std::string(cache.block(784111778)),
              "Date: Sun, 06 Nov 1994 08:49:38 GMT\r\nServer: rivet\r\n");
}

TEST(ResponseWriter, PlainResponse) {
    Response res;
    res.text("Hello, World!");
    std::string out;
    rivet::http::write_response(out, res, Framing{}, kDate);
    EXPECT_EQ(out,
              "HTTP/1.1 200 OK\r\nDate: X\r\nServer: rivet\r\n"
              "Content-Type: text/plain; charset=utf-8\r\nContent-Length: 13\r\n\r\n"
              "Hello, World!");
}

TEST(ResponseWriter, HeadKeepsLengthDropsBody) {
    Response res;
    res.text("Hello");
    std::string out;
    rivet::http::write_response(out, res, Framing{true, true, 1}, kDate);
    EXPECT_NE(out.find("Content-Length: 5\r\n"), std::string::npos);
    EXPECT_TRUE(out.ends_with("\r\n\r\n"));
}

TEST(ResponseWriter, ConnectionFieldFollowsTheRules) {
    Response res(204);
    std::string close, keep10, keep11;
    rivet::http::write_response(close, res, Framing{false, false, 1}, kDate);
    rivet::http::write_response(keep10, res, Framing{false, true, 0}, kDate);
    rivet::http::write_response(keep11, res, Framing{false, true, 1}, kDate);
    EXPECT_NE(close.find("Connection: close\r\n"), std::string::npos);
    EXPECT_NE(keep10.find("Connection: keep-alive\r\n"), std::string::npos);
    EXPECT_EQ(keep11.find("Connection:"), std::string::npos);
    // 204 carries neither a body nor a Content-Length.
    EXPECT_EQ(keep11.find("Content-Length"), std::string::npos);
}

TEST(ResponseWriter, StreamedIsChunkedOn11) {
    Response res;
    res.stream([](std::string&) { return false; }, "text/plain");
    std::string out11, out10;
    rivet::http::write_response(out11, res, Framing{}, kDate);
    rivet::http::write_response(out10, res, Framing{false, false, 0}, kDate);
    EXPECT_NE(out11.find("Transfer-Encoding: chunked\r\n"), std::string::npos);
    EXPECT_EQ(out10.find("Transfer-Encoding"), std::string::npos);
    EXPECT_EQ(out10.find("Content-Length"), std::string::npos);
    std::string chunks;
    rivet::http::append_chunk(chunks, "hello, world, 26 bytes....");
    rivet::http::append_chunk(chunks, "");
    rivet::http::append_last_chunk(chunks);
    EXPECT_EQ(chunks, "1a\r\nhello, world, 26 bytes....\r\n0\r\n\r\n");
}

TEST(ResponseWriter, RefusesResponseSplitting) {
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

TEST(ResponseWriter, ContentTypeSurvivesMoves) {
    Response a;
    a.content_type("application/vnd.example+json");  // run-time string, not a literal
    Response b = std::move(a);
    Response c;
    c = b;
    EXPECT_EQ(b.content_type(), "application/vnd.example+json");
    EXPECT_EQ(c.content_type(), "application/vnd.example+json");
}

TEST(ResponseWriter, SimpleResponseWithExtraFields) {
    std::string out;
    rivet::http::write_simple_response(out, 405, "Method Not Allowed\n", Framing{}, kDate,
                                       "Allow: GET, HEAD\r\n");
    EXPECT_TRUE(out.starts_with("HTTP/1.1 405 Method Not Allowed\r\n"));
    EXPECT_NE(out.find("Allow: GET, HEAD\r\n"), std::string::npos);
    EXPECT_TRUE(out.ends_with("\r\n\r\nMethod Not Allowed\n"));
}

}  // namespace
