// The engine reading requests: pipelining, heads in pieces, and the head size limits.
#include <arpa/inet.h>
#include <gtest/gtest.h>
#include <netinet/in.h>

#include <mutex>
#include <string>

#include "engine_harness.hpp"

namespace rivet::engine::testing {
namespace {

std::string echo(std::string_view method, std::string_view target, std::string_view body = {}) {
    return std::string(method) + " " + std::string(target) + " body=" + std::string(body);
}

TEST(EnginePipelining, AnswerIsTheExactBytes) {
    EngineHarness h;
    auto c = h.connect();
    c->send(get("/a"));
    auto got = c->read_responses(1);
    ASSERT_EQ(got.size(), 1u);
    EXPECT_EQ(got[0].raw_without_date(),
              "HTTP/1.1 200 OK\r\nServer: rivet\r\n"
              "Content-Type: text/plain; charset=utf-8\r\nContent-Length: 12\r\n\r\nGET /a body=");
    EXPECT_FALSE(got[0].field("Date").empty());
}

TEST(EnginePipelining, SeveralRequestsInOneWriteAnsweredInOrderInOneWrite) {
    EngineHarness h;
    auto c = h.connect();
    c->send(get("/1") + request("POST", "/2", "", "xyz") + get("/3"));
    auto got = c->read_responses(3);
    ASSERT_EQ(got.size(), 3u);
    EXPECT_EQ(got[0].body, echo("GET", "/1"));
    EXPECT_EQ(got[1].body, echo("POST", "/2", "xyz"));
    EXPECT_EQ(got[2].body, echo("GET", "/3"));
    // One read of the engine serves all three, and their answers leave with one write.
    EXPECT_EQ(c->reads(), 1);
    EXPECT_FALSE(c->eof());
}

TEST(EnginePipelining, RequestsSplitAcrossWrites) {
    EngineHarness h;
    auto c = h.connect();
    std::string all = get("/first") + request("PUT", "/second", "", "body!") + get("/third");
    // Cuts inside a request line, inside a field, between head and body, and inside a body.
    for (size_t piece : {1u, 3u, 7u, 20u}) {
        c->clear();
        c->send_in_pieces(all, piece, 1ms);
        auto got = c->read_responses(3);
        ASSERT_EQ(got.size(), 3u) << "piece " << piece;
        EXPECT_EQ(got[0].body, echo("GET", "/first"));
        EXPECT_EQ(got[1].body, echo("PUT", "/second", "body!"));
        EXPECT_EQ(got[2].body, echo("GET", "/third"));
    }
}

TEST(EngineHeads, OneByteAtATimeIsAnsweredOnceComplete) {
    EngineHarness h;
    auto c = h.connect();
    std::string r = get("/slow", "X-A: 1\r\n");
    c->send_in_pieces(r.substr(0, r.size() - 1), 1, 1ms);
    // The final LF is missing: nothing may be answered yet.
    EXPECT_EQ(c->read_for(100ms), "");
    c->send(r.substr(r.size() - 1));
    auto got = c->read_responses(1);
    ASSERT_EQ(got.size(), 1u);
    EXPECT_EQ(got[0].body, echo("GET", "/slow"));
}

// A head of `bytes` bytes or so, in fields of about 150 bytes.
std::string big_head(size_t bytes) {
    std::string fields;
    for (int i = 0; fields.size() + 160 < bytes; ++i)
        fields += "X-Field-" + std::to_string(i) + ": " + std::string(140, 'v') + "\r\n";
    return get("/big", fields);
}

TEST(EngineHeads, SixteenKibHeadInPiecesIsAnswered) {
    EngineHarness h;
    auto c = h.connect();
    std::string r = big_head(15 * 1024);  // just under the default 16 KiB header block
    ASSERT_GT(r.size(), 14u * 1024);
    c->send_in_pieces(r, 1000, 1ms);
    auto got = c->read_responses(1);
    ASSERT_EQ(got.size(), 1u);
    EXPECT_EQ(got[0].status, 200);
    EXPECT_EQ(got[0].body, echo("GET", "/big"));
}

TEST(EngineHeads, HeadLargerThanTheReadBufferTailIsAnswered) {
    // 40 KiB: past what an unfinished head may keep in the loop's shared buffer.
    ServerConfig config;
    config.limits.max_header_bytes = 64 * 1024;
    config.limits.max_headers = 400;
    EngineHarness h(config);
    auto c = h.connect();
    std::string r = big_head(40 * 1024) + get("/after");
    c->send_in_pieces(r, 4096, 1ms);
    auto got = c->read_responses(2);
    ASSERT_EQ(got.size(), 2u);
    EXPECT_EQ(got[0].body, echo("GET", "/big"));
    EXPECT_EQ(got[1].body, echo("GET", "/after"));
}

TEST(EngineHeads, HeaderBlockOverTheLimitGets431AndCloses) {
    ServerConfig config;
    config.limits.max_header_bytes = 1024;
    EngineHarness h(config);
    auto c = h.connect();
    c->send_in_pieces(big_head(4 * 1024), 256, 1ms);
    auto got = c->read_responses(1);
    ASSERT_EQ(got.size(), 1u);
    EXPECT_EQ(got[0].status, 431);
    EXPECT_EQ(got[0].field("Connection"), "close");
    EXPECT_TRUE(c->wait_eof());
    EXPECT_EQ(h.app().protocol_errors(), std::vector<int>{431});
    EXPECT_TRUE(h.app().bodies().empty());  // the application never saw it
}

TEST(EngineHeads, RequestLineOverTheLimitGets414AndCloses) {
    ServerConfig config;
    config.limits.max_request_line = 64;
    EngineHarness h(config);
    auto c = h.connect();
    c->send(get("/" + std::string(100, 'p')));
    auto got = c->read_responses(1);
    ASSERT_EQ(got.size(), 1u);
    EXPECT_EQ(got[0].status, 414);
    EXPECT_TRUE(c->wait_eof());
    EXPECT_EQ(h.app().protocol_errors(), std::vector<int>{414});
}

TEST(EngineHeads, RequestLineJustUnderTheLimitIsServed) {
    // The control for the test above: the limit, not the length itself, is what refuses.
    ServerConfig config;
    config.limits.max_request_line = 64;
    EngineHarness h(config);
    auto c = h.connect();
    std::string target = "/" + std::string(30, 'p');
    c->send(get(target));
    auto got = c->read_responses(1);
    ASSERT_EQ(got.size(), 1u);
    EXPECT_EQ(got[0].body, echo("GET", target));
}

TEST(EngineHeads, TheAdoptedPeerAddressReachesTheExchange) {
    std::mutex mu;
    std::string seen;
    EngineHarness h({}, [&](Exchange& ex) {
        std::lock_guard lock(mu);
        seen = ex.peer_address();
        ex.respond_simple(204, "");
    });
    sockaddr_storage peer{};
    auto& in = reinterpret_cast<sockaddr_in&>(peer);
    in.sin_family = AF_INET;
    inet_pton(AF_INET, "192.0.2.7", &in.sin_addr);
    auto c = h.connect(0, &peer);
    c->send(get("/"));
    auto got = c->read_responses(1);
    ASSERT_EQ(got.size(), 1u);
    EXPECT_EQ(got[0].status, 204);
    std::lock_guard lock(mu);
    EXPECT_EQ(seen, "192.0.2.7");
}

}  // namespace
}  // namespace rivet::engine::testing
