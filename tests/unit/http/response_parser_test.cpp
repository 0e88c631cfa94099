// The client's response head parser: status line, fields, the framing rules of RFC 9112 §6.3,
// refusals (with the byte that proves them, even in a prefix), limits, and splits anywhere.
#include "http/response_parser.hpp"

#include <gtest/gtest.h>

#include <array>
#include <string>

namespace rivet::http {
namespace {

struct Parsed {
    ParseResult r;
    ResponseHead head;
    std::array<Header, 16> storage;
};

Parsed parse(std::string_view in, bool head_request = false, ResponseLimits lim = {}) {
    Parsed p;
    p.r = parse_response_head(in, head_request, p.head, p.storage, lim);
    return p;
}

TEST(ResponseParser, ContentLengthResponse) {
    const std::string in = "HTTP/1.1 200 OK\r\nContent-Length: 5\r\nX-A:  b c  \r\n\r\nhello";
    auto p = parse(in);
    ASSERT_EQ(p.r.kind, ParseResult::Complete) << p.r.reason;
    EXPECT_EQ(p.r.head_bytes, in.size() - 5);
    EXPECT_EQ(p.head.status, 200);
    EXPECT_EQ(p.head.reason, "OK");
    EXPECT_EQ(p.head.body, ResponseBody::ContentLength);
    EXPECT_EQ(p.head.content_length, 5u);
    EXPECT_TRUE(p.head.keep_alive);
    ASSERT_EQ(p.head.headers.size(), 2u);
    EXPECT_EQ(p.head.headers[1].name, "X-A");
    EXPECT_EQ(p.head.headers[1].value, "b c");
    EXPECT_EQ(p.head.headers[1].value.data(), in.data() + in.find("b c")) << "a view, no copy";
}

TEST(ResponseParser, ChunkedAndUntilClose) {
    auto p = parse("HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n");
    ASSERT_EQ(p.r.kind, ParseResult::Complete);
    EXPECT_EQ(p.head.body, ResponseBody::Chunked);
    EXPECT_TRUE(p.head.keep_alive);
    p = parse("HTTP/1.1 200 OK\r\nServer: x\r\n\r\n");
    ASSERT_EQ(p.r.kind, ParseResult::Complete);
    EXPECT_EQ(p.head.body, ResponseBody::UntilClose);
    EXPECT_FALSE(p.head.keep_alive) << "the close is the body's end";
}

TEST(ResponseParser, NoBodyForHeadAndSomeStatuses) {
    auto p = parse("HTTP/1.1 200 OK\r\nContent-Length: 99\r\n\r\n", true);
    ASSERT_EQ(p.r.kind, ParseResult::Complete);
    EXPECT_EQ(p.head.body, ResponseBody::None);
    for (const char* in : {"HTTP/1.1 204 No Content\r\n\r\n",
                           "HTTP/1.1 304 Not Modified\r\nContent-Length: 10\r\n\r\n",
                           "HTTP/1.1 100 Continue\r\n\r\n"}) {
        p = parse(in);
        ASSERT_EQ(p.r.kind, ParseResult::Complete) << in;
        EXPECT_EQ(p.head.body, ResponseBody::None) << in;
    }
    EXPECT_TRUE(parse("HTTP/1.1 100 Continue\r\n\r\n").head.interim());
    EXPECT_EQ(parse("HTTP/1.1 204 x\r\nContent-Length: 3\r\n\r\n").r.kind, ParseResult::Error);
}

TEST(ResponseParser, ConnectionAndVersion) {
    auto p = parse("HTTP/1.1 200 OK\r\nConnection: foo, close\r\nContent-Length: 0\r\n\r\n");
    EXPECT_FALSE(p.head.keep_alive);
    p = parse("HTTP/1.0 200 OK\r\nContent-Length: 0\r\n\r\n");
    EXPECT_EQ(p.head.version_minor, 0);
    EXPECT_FALSE(p.head.keep_alive);
    p = parse("HTTP/1.0 200 OK\r\nConnection: keep-alive\r\nContent-Length: 0\r\n\r\n");
    EXPECT_TRUE(p.head.keep_alive);
    p = parse("HTTP/1.1 200 \r\nContent-Length: 0\r\n\r\n");
    ASSERT_EQ(p.r.kind, ParseResult::Complete);
    EXPECT_EQ(p.head.reason, "");
}

TEST(ResponseParser, RefusesWhatCouldBeReadTwoWays) {
    const char* bad[] = {
        "HTTP/1.1 200 OK\r\nContent-Length: 5\r\nTransfer-Encoding: chunked\r\n\r\n",
        "HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\nContent-Length: 5\r\n\r\n",
        "HTTP/1.1 200 OK\r\nContent-Length: 5\r\nContent-Length: 6\r\n\r\n",
        "HTTP/1.1 200 OK\r\nContent-Length: 5, 5\r\n\r\n",
        "HTTP/1.1 200 OK\r\nContent-Length: -1\r\n\r\n",
        "HTTP/1.1 200 OK\r\nContent-Length: 99999999999999999999999\r\n\r\n",
        "HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked, gzip\r\n\r\n",
        "HTTP/1.1 200 OK\r\nTransfer-Encoding: gzip\r\n\r\n",
        "HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked, chunked\r\n\r\n",
        "HTTP/1.0 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n",
        "HTTP/1.1 200 OK\r\nX: a\r\n folded\r\n\r\n",
        "HTTP/1.1 200 OK\r\nX : a\r\n\r\n",
        "HTTP/1.1 200 OK\r\nX: a\rb\r\n\r\n",
        "HTTP/1.1 200 OK\nX: a\r\n\r\n",
        "HTTP/1.1 200 OK\r\nX: a\n\r\n",
        "HTTP/1.1 200 OK\r\n: a\r\n\r\n",
        "HTTP/1.1 2000 OK\r\n\r\n",
        "HTTP/1.1 099 OK\r\n\r\n",
        "HTTP/1.1 600 OK\r\n\r\n",
        "HTTP/1.1 20x OK\r\n\r\n",
        "HTTP/1.1 200\r\n\r\n",
        "HTTP/2 200 OK\r\n\r\n",
        "http/1.1 200 OK\r\n\r\n",
        "ICY 200 OK\r\n\r\n",
        "HTTP/1.1 200 O\x01K\r\n\r\n",
    };
    for (const char* in : bad) {
        auto p = parse(in);
        EXPECT_EQ(p.r.kind, ParseResult::Error) << in;
        EXPECT_EQ(p.r.status, 502) << in;
        EXPECT_NE(*p.r.reason, '\0') << in;
    }
}

TEST(ResponseParser, GarbageIsRefusedAtOnce) {
    EXPECT_EQ(parse("<html>").r.kind, ParseResult::Error);
    EXPECT_EQ(parse("HTTP/1.1 2").r.kind, ParseResult::Incomplete);
    EXPECT_EQ(parse("HTTP/1.1 2x").r.kind, ParseResult::Error);
}

TEST(ResponseParser, Limits) {
    ResponseLimits lim;
    lim.max_status_line = 30;
    lim.max_header_bytes = 40;
    lim.max_headers = 2;
    EXPECT_EQ(parse("HTTP/1.1 200 " + std::string(40, 'a'), false, lim).r.kind, ParseResult::Error);
    EXPECT_EQ(parse("HTTP/1.1 200 OK\r\nA: " + std::string(50, 'a'), false, lim).r.kind,
              ParseResult::Error);
    EXPECT_EQ(parse("HTTP/1.1 200 OK\r\nA: 1\r\nB: 2\r\nC: 3\r\n\r\n", false, lim).r.kind,
              ParseResult::Error);
    EXPECT_EQ(parse("HTTP/1.1 200 OK\r\nA: 1\r\nB: 2\r\n\r\n", false, lim).r.kind,
              ParseResult::Complete);
    EXPECT_EQ(parse("HTTP/1.1 200 OK\r\nA: " + std::string(20, 'a'), false, lim).r.kind,
              ParseResult::Incomplete);
}

TEST(ResponseParser, AStatusLineLimitBelowItsFixedPartCountsFromTheReason) {
    // Found by response_parser_fuzz: a limit of 4 made a prefix and the whole disagree.
    ResponseLimits lim;
    lim.max_status_line = 4;
    EXPECT_EQ(parse("HTTP/1.1 200 OK\r\n\r\n", false, lim).r.kind, ParseResult::Error);
    EXPECT_EQ(parse("HTTP/1.1 200 ", false, lim).r.kind, ParseResult::Incomplete);
    EXPECT_EQ(parse("HTTP/1.1 200 \r\n\r\n", false, lim).r.kind, ParseResult::Complete);
}

TEST(ResponseParser, AnySplitGivesTheSameAnswer) {
    const std::string in =
        "HTTP/1.1 404 Not Found\r\nContent-Type: text/plain\r\nTransfer-Encoding: chunked\r\n"
        "Connection: keep-alive\r\n\r\n";
    for (size_t cut = 0; cut < in.size(); ++cut)
        EXPECT_EQ(parse(in.substr(0, cut)).r.kind, ParseResult::Incomplete) << cut;
    auto p = parse(in);
    ASSERT_EQ(p.r.kind, ParseResult::Complete);
    EXPECT_EQ(p.r.head_bytes, in.size());
    EXPECT_EQ(p.head.status, 404);
    EXPECT_EQ(p.head.reason, "Not Found");
}

}  // namespace
}  // namespace rivet::http
