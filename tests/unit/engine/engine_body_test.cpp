// The engine reading request bodies: Content-Length and chunked, in pieces, over the limit, and
// Expect: 100-continue.
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "engine_harness.hpp"

namespace rivet::engine::testing {
namespace {

TEST(EngineBodies, ContentLengthBodySplitAcrossWritesArrivesWhole) {
    EngineHarness h;
    auto c = h.connect();
    std::string body;
    for (int i = 0; i < 3000; ++i) body += char('a' + i % 26);
    std::string r = request("POST", "/upload", "", body);
    // Head and body in separate writes, the body itself in uneven pieces.
    size_t head_end = r.find("\r\n\r\n") + 4;
    c->send_in_pieces(r.substr(0, head_end - 2), 10, 1ms);
    c->send(r.substr(head_end - 2, 2));
    c->send_in_pieces(r.substr(head_end), 700, 2ms);
    auto got = c->read_responses(1);
    ASSERT_EQ(got.size(), 1u);
    EXPECT_EQ(got[0].status, 200);
    EXPECT_EQ(h.app().bodies(), std::vector<std::string>{body});
}

TEST(EngineBodies, LargeContentLengthBodyPastTheReadBufferArrivesWhole) {
    EngineHarness h;
    auto c = h.connect();
    std::string body(200 * 1024, 'z');
    body[12345] = '!';
    c->send_in_pieces(request("POST", "/big", "", body) + get("/next"), 16 * 1024, 1ms);
    auto got = c->read_responses(2);
    ASSERT_EQ(got.size(), 2u);
    auto bodies = h.app().bodies();
    ASSERT_EQ(bodies.size(), 2u);
    EXPECT_TRUE(bodies[0] == body) << "body of " << bodies[0].size() << " bytes differs";
    EXPECT_EQ(bodies[1], "");
    EXPECT_EQ(got[1].body, "GET /next body=");
}

TEST(EngineBodies, ChunkedBodySplitAcrossWritesIsDecoded) {
    EngineHarness h;
    auto c = h.connect();
    std::string r =
        "POST /chunks HTTP/1.1\r\nHost: t\r\nTransfer-Encoding: chunked\r\n\r\n"
        "5\r\nhello\r\n"
        "1;ext=1\r\n,\r\n"
        "a\r\n0123456789\r\n"
        "0\r\n\r\n";
    std::string all = r + get("/after");
    for (size_t piece : {1u, 4u, 9u}) {
        c->clear();
        c->send_in_pieces(all, piece, 1ms);
        auto got = c->read_responses(2);
        ASSERT_EQ(got.size(), 2u) << "piece " << piece;
        EXPECT_EQ(got[0].body, "POST /chunks body=hello,0123456789");
        EXPECT_EQ(got[1].body, "GET /after body=");
    }
}

TEST(EngineBodies, ContentLengthOverTheLimitGets413AndCloses) {
    ServerConfig config;
    config.limits.max_body = 100;
    EngineHarness h(config);
    auto c = h.connect();
    c->send("POST /x HTTP/1.1\r\nHost: t\r\nContent-Length: 101\r\n\r\n");
    auto got = c->read_responses(1);
    ASSERT_EQ(got.size(), 1u);
    EXPECT_EQ(got[0].status, 413);
    EXPECT_EQ(got[0].field("Connection"), "close");
    EXPECT_TRUE(c->wait_eof());
    EXPECT_TRUE(h.app().bodies().empty());
    EXPECT_EQ(h.app().protocol_errors(), std::vector<int>{413});
}

TEST(EngineBodies, ContentLengthAtTheLimitIsServed) {
    ServerConfig config;
    config.limits.max_body = 100;
    EngineHarness h(config);
    auto c = h.connect();
    c->send(request("POST", "/x", "", std::string(100, 'b')));
    auto got = c->read_responses(1);
    ASSERT_EQ(got.size(), 1u);
    EXPECT_EQ(got[0].status, 200);
}

TEST(EngineBodies, ChunkedBodyOverTheLimitGets413AndCloses) {
    ServerConfig config;
    config.limits.max_body = 100;
    EngineHarness h(config);
    auto c = h.connect();
    c->send("POST /x HTTP/1.1\r\nHost: t\r\nTransfer-Encoding: chunked\r\n\r\n");
    c->send_in_pieces(
        "40\r\n" + std::string(64, 'c') + "\r\n40\r\n" + std::string(64, 'c') + "\r\n0\r\n\r\n", 30,
        1ms);
    auto got = c->read_responses(1);
    ASSERT_EQ(got.size(), 1u);
    EXPECT_EQ(got[0].status, 413);
    EXPECT_TRUE(c->wait_eof());
    EXPECT_TRUE(h.app().bodies().empty());
}

TEST(EngineBodies, ExpectContinueGets100BeforeTheBodyIsSent) {
    EngineHarness h;
    auto c = h.connect();
    c->send("POST /up HTTP/1.1\r\nHost: t\r\nExpect: 100-continue\r\nContent-Length: 5\r\n\r\n");
    ASSERT_TRUE(c->read_until("\r\n\r\n"));
    // The interim answer alone: the request is not served before its body.
    EXPECT_EQ(c->received(), "HTTP/1.1 100 Continue\r\n\r\n");
    EXPECT_EQ(c->read_for(50ms), "");
    c->send("hello");
    auto got = c->read_responses(2);
    ASSERT_EQ(got.size(), 2u);
    EXPECT_EQ(got[0].status, 100);
    EXPECT_EQ(got[1].status, 200);
    EXPECT_EQ(got[1].body, "POST /up body=hello");
}

TEST(EngineBodies, ExpectContinueWaitsForEarlierAnswers) {
    // A 100 must not overtake the answer to a request before it that is still being made.
    EngineHarness h({}, [&](Exchange& ex) {
        if (ex.head().path == "/later") return h.app().keep(ex.defer());
        ex.respond(rivet::app::view_of(rivet::Response(200).text(std::string(ex.body()))));
    });
    auto c = h.connect();
    c->send(get("/later") +
            "POST /up HTTP/1.1\r\nHost: t\r\nExpect: 100-continue\r\nContent-Length: 2\r\n\r\n");
    auto deferred = h.app().take_deferred(1);
    ASSERT_EQ(deferred.size(), 1u);
    EXPECT_EQ(c->read_for(50ms), "");
    deferred[0].complete(rivet::app::reply_of(reply("first")));
    ASSERT_TRUE(c->read_until("HTTP/1.1 100 Continue\r\n\r\n"));
    c->send("ok");
    auto got = c->read_responses(3);
    ASSERT_EQ(got.size(), 3u);
    EXPECT_EQ(got[0].body, "first");
    EXPECT_EQ(got[1].status, 100);
    EXPECT_EQ(got[2].body, "ok");
}

}  // namespace
}  // namespace rivet::engine::testing
