// When a connection ends: Connection: close, HTTP/1.0, close_connection(), the request limit,
// the peer's half-close and garbage; and how bodies are framed (streamed, HEAD).
#include <gtest/gtest.h>

#include <memory>
#include <stdexcept>
#include <string>
#include <vector>

#include "engine_harness.hpp"

namespace rivet::engine::testing {
namespace {

TEST(EngineClose, ConnectionCloseRequestGetsItsAnswerThenEof) {
    EngineHarness h;
    auto c = h.connect();
    c->send(get("/bye", "Connection: close\r\n") + get("/never"));
    auto got = c->read_responses(2);
    ASSERT_EQ(got.size(), 1u);
    EXPECT_EQ(got[0].body, "GET /bye body=");
    EXPECT_EQ(got[0].field("Connection"), "close");
    EXPECT_TRUE(c->wait_eof());
    EXPECT_EQ(h.app().bodies().size(), 1u);  // the request after it was not served
}

TEST(EngineClose, Http10WithoutKeepAliveCloses) {
    EngineHarness h;
    auto c = h.connect();
    c->send("GET /old HTTP/1.0\r\n\r\n");
    auto got = c->read_responses(1);
    ASSERT_EQ(got.size(), 1u);
    EXPECT_TRUE(got[0].head.starts_with("HTTP/1.1 200 OK\r\n"));
    EXPECT_EQ(got[0].field("Connection"), "close");
    EXPECT_TRUE(c->wait_eof());
}

TEST(EngineClose, Http10WithKeepAliveStaysOpen) {
    EngineHarness h;
    auto c = h.connect();
    c->send("GET /1 HTTP/1.0\r\nConnection: keep-alive\r\n\r\n");
    auto got = c->read_responses(1);
    ASSERT_EQ(got.size(), 1u);
    EXPECT_EQ(got[0].field("Connection"), "keep-alive");
    EXPECT_EQ(c->read_for(50ms), "");
    EXPECT_FALSE(c->eof());
    c->send("GET /2 HTTP/1.0\r\nConnection: keep-alive\r\n\r\n");
    got = c->read_responses(2);
    ASSERT_EQ(got.size(), 2u);
    EXPECT_EQ(got[1].body, "GET /2 body=");
}

TEST(EngineClose, ResponseWithCloseConnectionEndsTheConnection) {
    EngineHarness h({}, [](Exchange& ex) {
        ex.respond(rivet::app::view_of(rivet::Response(200).text("last").close_connection(true)));
    });
    auto c = h.connect();
    c->send(get("/a") + get("/b"));
    auto got = c->read_responses(2);
    ASSERT_EQ(got.size(), 1u);
    EXPECT_EQ(got[0].body, "last");
    EXPECT_EQ(got[0].field("Connection"), "close");
    EXPECT_TRUE(c->wait_eof());
    EXPECT_EQ(h.app().bodies().size(), 1u);
}

TEST(EngineClose, DeferredResponseWithCloseConnectionEndsTheConnection) {
    EngineHarness h({}, [&](Exchange& ex) { h.app().keep(ex.defer()); });
    auto c = h.connect();
    c->send(get("/a"));
    auto deferred = h.app().take_deferred(1);
    ASSERT_EQ(deferred.size(), 1u);
    deferred[0].complete(rivet::app::reply_of(std::move(reply("done").close_connection(true))));
    auto got = c->read_responses(1);
    ASSERT_EQ(got.size(), 1u);
    EXPECT_EQ(got[0].field("Connection"), "close");
    EXPECT_TRUE(c->wait_eof());
}

TEST(EngineClose, MaxRequestsPerConnection) {
    ServerConfig config;
    config.limits.max_requests_per_connection = 2;
    EngineHarness h(config);
    auto c = h.connect();
    c->send(get("/1") + get("/2") + get("/3"));
    auto got = c->read_responses(3);
    ASSERT_EQ(got.size(), 2u);
    EXPECT_EQ(got[0].field("Connection"), "");
    EXPECT_EQ(got[1].field("Connection"), "close");
    EXPECT_EQ(got[1].body, "GET /2 body=");
    EXPECT_TRUE(c->wait_eof());
}

TEST(EngineClose, PeerHalfCloseAfterAFullRequestStillGetsTheAnswer) {
    EngineHarness h;
    auto c = h.connect();
    c->send(get("/1") + request("POST", "/2", "", "last words"));
    c->shutdown_write();
    auto got = c->read_responses(2);
    ASSERT_EQ(got.size(), 2u);
    EXPECT_EQ(got[1].body, "POST /2 body=last words");
    EXPECT_TRUE(c->wait_eof());
}

// A client's EOF while an answer is still being worked on is the client going away (nginx's
// 499): the connection closes and the Deferred is cancelled (engine_cancel_test.cpp). Answers
// made at once still reach a half-closed client (PeerHalfCloseAfterAFullRequestStillGetsTheAnswer).
TEST(EngineClose, PeerHalfCloseWhileADeferredAnswerIsOwedClosesAndCancelsIt) {
    EngineHarness h({}, [&](Exchange& ex) { h.app().keep(ex.defer()); });
    auto c = h.connect();
    c->send(get("/slow"));
    auto deferred = h.app().take_deferred(1);
    ASSERT_EQ(deferred.size(), 1u);
    c->shutdown_write();
    EXPECT_TRUE(c->wait_eof());
    EXPECT_EQ(c->received(), "");
    ASSERT_TRUE(h.sync());
    EXPECT_TRUE(deferred[0].cancelled());
    deferred[0].complete(rivet::app::reply_of(reply("nobody is waiting")));  // goes nowhere
    ASSERT_TRUE(h.sync());
}

TEST(EngineClose, PeerHalfCloseMidHeadClosesWithoutAnswer) {
    EngineHarness h;
    auto c = h.connect();
    c->send("GET /half HTTP/1.1\r\nHo");
    c->shutdown_write();
    EXPECT_TRUE(c->wait_eof());
    EXPECT_EQ(c->received(), "");
}

TEST(EngineClose, GarbageGets400AndClose) {
    EngineHarness h;
    auto c = h.connect();
    c->send("\x01\x02 nonsense\r\n\r\n");
    auto got = c->read_responses(1);
    ASSERT_EQ(got.size(), 1u);
    EXPECT_EQ(got[0].status, 400);
    EXPECT_EQ(got[0].field("Connection"), "close");
    EXPECT_TRUE(c->wait_eof());
    EXPECT_EQ(h.app().protocol_errors(), std::vector<int>{400});
}

TEST(EngineClose, GarbageAfterAGoodRequestAnswersBothInOrder) {
    EngineHarness h;
    auto c = h.connect();
    c->send(get("/good") + "BAD\x7f LINE\r\n\r\n");
    auto got = c->read_responses(3);
    ASSERT_EQ(got.size(), 2u);
    EXPECT_EQ(got[0].body, "GET /good body=");
    EXPECT_EQ(got[1].status, 400);
    EXPECT_TRUE(c->wait_eof());
}

TEST(EngineClose, HandlerExceptionAnswers500AndKeepsTheConnection) {
    EngineHarness h({}, [](Exchange& ex) {
        if (ex.head().path == "/throw") throw std::runtime_error("boom");
        ex.respond_simple(200, "fine\n");
    });
    auto c = h.connect();
    c->send(get("/throw") + get("/ok"));
    auto got = c->read_responses(2);
    ASSERT_EQ(got.size(), 2u);
    EXPECT_EQ(got[0].status, 500);
    EXPECT_EQ(got[1].body, "fine\n");
}

// A producer that sends "part0".."part<n-1>" as separate pieces.
rivet::BodyProducer parts(int n) {
    auto i = std::make_shared<int>(0);
    return [i, n](std::string& out) {
        out += "part" + std::to_string((*i)++);
        return *i < n;
    };
}

TEST(EngineStream, StreamedBodyIsChunkedAndFollowedByTheNextAnswer) {
    EngineHarness h({}, [](Exchange& ex) {
        if (ex.head().path == "/stream") {
            ex.respond(rivet::app::view_of(rivet::Response(200).stream(parts(3), "text/plain")));
        } else {
            ex.respond_simple(200, "after\n");
        }
    });
    auto c = h.connect();
    c->send(get("/stream") + get("/next"));
    auto got = c->read_responses(2);
    ASSERT_EQ(got.size(), 2u);
    EXPECT_TRUE(got[0].chunked);
    EXPECT_EQ(got[0].field("Content-Length"), "");
    EXPECT_EQ(got[0].body, "part0part1part2");
    EXPECT_TRUE(got[0].raw.ends_with("\r\n0\r\n\r\n"));
    EXPECT_EQ(got[1].body, "after\n");
}

TEST(EngineStream, LargeStreamThroughASmallSocketBufferThenTheNextAnswer) {
    // Many pieces through a send buffer that fills: the stream resumes on writability, and
    // the request pipelined behind it is served only after its last chunk.
    constexpr int kPieces = 200;
    EngineHarness h({}, [](Exchange& ex) {
        if (ex.head().path != "/stream") return ex.respond_simple(200, "after\n");
        auto i = std::make_shared<int>(0);
        ex.respond(rivet::app::view_of(rivet::Response(200).stream(
            [i](std::string& out) {
                out.append(10'000, char('a' + (*i)++ % 26));
                return *i < kPieces;
            },
            "application/octet-stream")));
    });
    auto c = h.connect(16 * 1024);
    c->send(get("/stream") + get("/next"));
    auto got = c->read_responses(2, 3000ms);
    ASSERT_EQ(got.size(), 2u);
    ASSERT_EQ(got[0].body.size(), size_t(kPieces) * 10'000);
    for (int p = 0; p < kPieces; ++p)
        ASSERT_EQ(got[0].body[size_t(p) * 10'000], char('a' + p % 26)) << "piece " << p;
    EXPECT_EQ(got[1].body, "after\n");
}

TEST(EngineStream, StreamedBodyToHttp10EndsAtClose) {
    EngineHarness h({}, [](Exchange& ex) {
        ex.respond(rivet::app::view_of(rivet::Response(200).stream(parts(2), "text/plain")));
    });
    auto c = h.connect();
    c->send("GET /s HTTP/1.0\r\nConnection: keep-alive\r\n\r\n");
    ASSERT_TRUE(c->wait_eof());
    auto got = parse_responses(c->received(), {}, true);
    ASSERT_EQ(got.size(), 1u);
    EXPECT_FALSE(got[0].chunked);
    EXPECT_EQ(got[0].body, "part0part1");
}

TEST(EngineStream, HeadRequestGetsFieldsButNoBodyBytes) {
    EngineHarness h({}, [](Exchange& ex) {
        ex.respond(rivet::app::view_of(rivet::Response(200).text("hello body")));
    });
    auto c = h.connect();
    c->send(request("HEAD", "/h") + get("/g"));
    auto got = c->read_responses(2, 2000ms, {true, false});
    ASSERT_EQ(got.size(), 2u);
    EXPECT_EQ(got[0].field("Content-Length"), "10");
    EXPECT_EQ(got[0].body, "");
    // The next response starts right after the HEAD answer's empty line: no body bytes between.
    EXPECT_TRUE(got[1].raw.starts_with("HTTP/1.1 200 OK\r\n"));
    EXPECT_EQ(got[1].body, "hello body");
    EXPECT_EQ(c->received(), got[0].raw + got[1].raw);
}

TEST(EngineStream, HeadRequestForAStreamSendsNoChunks) {
    EngineHarness h({}, [](Exchange& ex) {
        ex.respond(rivet::app::view_of(rivet::Response(200).stream(parts(3), "text/plain")));
    });
    auto c = h.connect();
    c->send(request("HEAD", "/s") + request("HEAD", "/s"));
    auto got = c->read_responses(2, 2000ms, {true, true});
    ASSERT_EQ(got.size(), 2u);
    EXPECT_EQ(c->received(), got[0].raw + got[1].raw);
    EXPECT_EQ(c->read_for(50ms), "");
}

}  // namespace
}  // namespace rivet::engine::testing
