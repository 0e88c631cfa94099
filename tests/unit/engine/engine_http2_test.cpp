// Http2Session at the engine's level, with a real HTTP/2 client (libnghttp2's client session,
// h2_client.hpp) over a socketpair: h2c by prior knowledge (the preface hands a plain connection
// from HTTP/1.1 over, a part of it waits), answers at once and deferred (completed, or cancelled
// by the client's RST_STREAM), buffered bodies, trailers, refusals (413, 431) that leave the
// connection serving, MAX_CONCURRENT_STREAMS, and GOAWAY when the loop drains. Streamed bodies,
// waiting producers and the body budget are in engine_http2_body_test.cpp.
#include <gtest/gtest.h>

#include <atomic>
#include <memory>
#include <string>
#include <vector>

#include "engine_harness.hpp"
#include "h2_client.hpp"
#include "http/http2/request_head.hpp"

namespace rivet::engine::testing {
namespace {

using http::http2::kPreface;

// Nothing arrives from the server without it being asked (the socket holds no bytes now).
bool socket_silent(int fd) {
    char c;
    return recv(fd, &c, 1, MSG_DONTWAIT | MSG_PEEK) < 0 && errno == EAGAIN;
}

TEST(EngineHttp2, PrefaceOnAPlainConnectionSwitchesToHttp2) {
    std::atomic<int> version{0};
    std::string host;
    EngineHarness h({}, [&](Exchange& ex) {
        version = ex.head().version_major;
        host = std::string(ex.head().authority);
        ex.respond_simple(200, "over h2\n");
    });
    auto c = h.connect();
    H2Client client(*c);
    const int32_t id = client.request("GET", "/hello");
    ASSERT_TRUE(client.finish(id));
    const H2Stream& s = client.stream(id);
    EXPECT_EQ(s.status, 200);
    EXPECT_EQ(s.body, "over h2\n");
    EXPECT_EQ(s.field("content-length"), "8");
    EXPECT_TRUE(s.ended);
    EXPECT_EQ(s.close_code, uint32_t(NGHTTP2_NO_ERROR));
    ASSERT_TRUE(h.sync());  // the handler's writes are seen here
    EXPECT_EQ(version.load(), 2);
    EXPECT_EQ(host, "t");
    // The SETTINGS the contract names.
    auto settings = client.server_settings();
    EXPECT_EQ(settings[NGHTTP2_SETTINGS_MAX_CONCURRENT_STREAMS], 100u);
    EXPECT_EQ(settings[NGHTTP2_SETTINGS_INITIAL_WINDOW_SIZE], ServerConfig{}.http2.stream_window);
    EXPECT_EQ(settings[NGHTTP2_SETTINGS_MAX_HEADER_LIST_SIZE],
              ServerConfig{}.limits.max_header_bytes);
    EXPECT_EQ(settings[NGHTTP2_SETTINGS_ENABLE_PUSH], 0u);
    EXPECT_EQ(h.io().stats().http2_connections.load(), 1u);
}

TEST(EngineHttp2, APartialPrefaceWaitsForTheRest) {
    EngineHarness h;
    auto c = h.connect();
    H2Client client(*c);
    const int32_t id = client.request("GET", "/split");
    const std::string out = client.take_output();  // preface, SETTINGS, HEADERS
    ASSERT_TRUE(out.starts_with(kPreface));
    // The preface a byte at a time, the loop done with each before the next: nothing is
    // answered and the connection stays open.
    for (size_t i = 0; i + 1 < kPreface.size(); ++i) {
        c->send(out.substr(i, 1));
        ASSERT_TRUE(h.sync());
        ASSERT_TRUE(h.sync());
        ASSERT_TRUE(socket_silent(c->fd())) << "answered after " << i + 1 << " bytes";
    }
    EXPECT_EQ(h.io().stats().http2_connections.load(), 0u);
    c->send(out.substr(kPreface.size() - 1));
    ASSERT_TRUE(client.finish(id));
    EXPECT_EQ(client.stream(id).status, 200);
    EXPECT_EQ(client.stream(id).body, "GET /split body=");
    EXPECT_EQ(h.io().stats().http2_connections.load(), 1u);
}

TEST(EngineHttp2, ARequestStartingWithPIsStillHttp11) {
    EngineHarness h;
    auto c = h.connect();
    c->send(request("POST", "/p", "", "x") + request("PUT", "/q", "", "y"));
    auto got = c->read_responses(2);
    ASSERT_EQ(got.size(), 2u);
    EXPECT_EQ(got[0].body, "POST /p body=x");
    EXPECT_EQ(got[1].body, "PUT /q body=y");
    EXPECT_EQ(h.io().stats().http2_connections.load(), 0u);
}

TEST(EngineHttp2, AHundredConcurrentStreamsOnOneConnectionAreAllAnswered) {
    EngineHarness h({}, [&](Exchange& ex) { h.app().keep(ex.defer()); });
    auto c = h.connect();
    H2Client client(*c);
    std::vector<int32_t> ids;
    for (int i = 0; i < 100; ++i) ids.push_back(client.request("GET", "/n/" + std::to_string(i)));
    ASSERT_TRUE(client.sync());  // all 100 are open at once, each waiting for its answer
    auto deferred = h.app().take_deferred(100);
    ASSERT_EQ(deferred.size(), 100u);
    for (size_t i = deferred.size(); i-- > 0;)  // answered in the reverse order
        deferred[i].complete(app::reply_of(reply("answer " + std::to_string(i))));
    ASSERT_TRUE(client.run_until([&] {
        for (int32_t id : ids)
            if (!client.stream(id).closed) return false;
        return true;
    }));
    for (int i = 0; i < 100; ++i) {
        EXPECT_EQ(client.stream(ids[i]).status, 200);
        EXPECT_EQ(client.stream(ids[i]).body, "answer " + std::to_string(i));
    }
    EXPECT_FALSE(client.goaway());
}

TEST(EngineHttp2, ADeferredAnswerIsSentWhenCompleted) {
    EngineHarness h({}, [&](Exchange& ex) {
        if (ex.head().path == "/later") return h.app().keep(ex.defer());
        ex.respond_simple(200, "now\n");
    });
    auto c = h.connect();
    H2Client client(*c);
    const int32_t later = client.request("GET", "/later");
    const int32_t now = client.request("GET", "/now");
    ASSERT_TRUE(client.finish(now));  // the other stream is not held up by the deferred one
    EXPECT_EQ(client.stream(now).body, "now\n");
    EXPECT_FALSE(client.stream(later).closed);
    auto deferred = h.app().take_deferred(1);
    ASSERT_EQ(deferred.size(), 1u);
    deferred[0].complete(app::reply_of(reply("done later")));
    ASSERT_TRUE(client.finish(later));
    EXPECT_EQ(client.stream(later).status, 200);
    EXPECT_EQ(client.stream(later).body, "done later");
}

TEST(EngineHttp2, AResetStreamCancelsItsDeferredAnswer) {
    auto cancelled = std::make_shared<std::atomic<int>>(0);
    EngineHarness h({}, [&](Exchange& ex) {
        if (ex.head().path != "/wait") return ex.respond_simple(200, "other\n");
        Deferred d = ex.defer();
        d.on_cancel([cancelled] { ++*cancelled; });
        h.app().keep(std::move(d));
    });
    auto c = h.connect();
    H2Client client(*c);
    const int32_t id = client.request("GET", "/wait");
    auto deferred = [&] {
        std::vector<Deferred> d;
        client.run_until([&] { return (d = h.app().take_deferred(1, 10ms)).size() == 1; });
        return d;
    }();
    ASSERT_EQ(deferred.size(), 1u);
    EXPECT_FALSE(deferred[0].cancelled());
    client.reset(id);
    ASSERT_TRUE(client.sync());
    ASSERT_TRUE(h.sync());
    EXPECT_EQ(cancelled->load(), 1);
    EXPECT_TRUE(deferred[0].cancelled());
    // Completed after the cancel, it goes nowhere; the connection serves on.
    deferred[0].complete(app::reply_of(reply("too late")));
    const int32_t other = client.request("GET", "/other");
    ASSERT_TRUE(client.finish(other));
    EXPECT_EQ(client.stream(other).body, "other\n");
    EXPECT_EQ(client.stream(id).body, "");
    EXPECT_FALSE(client.stream(id).reset_by_server);
    EXPECT_EQ(h.io().stats().cancelled.load(), 1u);
}

TEST(EngineHttp2, ABufferedBodyLargerThanTheWindowArrivesWhole) {
    EngineHarness h(
        {}, [](Exchange& ex) { ex.respond_simple(200, std::to_string(ex.body().size()) + "\n"); });
    auto c = h.connect();
    H2Client client(*c);
    std::string body(3 * ServerConfig{}.http2.stream_window + 123, '.');
    for (size_t i = 0; i < body.size(); i += 101) body[i] = char('a' + i % 26);
    const std::string small = "hello";
    const int32_t big = client.request("POST", "/big", {}, &body);
    const int32_t little = client.request("POST", "/small", {{"content-length", "5"}}, &small);
    ASSERT_TRUE(client.finish(big, 10'000ms));
    ASSERT_TRUE(client.finish(little));
    EXPECT_EQ(client.stream(big).status, 200);
    EXPECT_EQ(client.stream(big).body, std::to_string(body.size()) + "\n");
    EXPECT_EQ(client.stream(little).body, "5\n");
    auto bodies = h.app().bodies();
    ASSERT_EQ(bodies.size(), 2u);
    EXPECT_TRUE(bodies[0] == body || bodies[1] == body);
    EXPECT_TRUE(bodies[0] == small || bodies[1] == small);
    EXPECT_EQ(h.io().budget().held(), 0u);
}

TEST(EngineHttp2, TrailersFollowTheBodyInAHeadersFrame) {
    EngineHarness h({}, [](Exchange& ex) {
        rivet::Response res;
        if (ex.head().path == "/bytes") {
            res.text("hello").trailer("checksum", "abc");
        } else {
            rivet::Trailers trailers = res.trailers();
            auto left = std::make_shared<int>(3);
            res.stream(
                [left, trailers](std::string& out) mutable {
                    if (*left > 0) {
                        out = "piece" + std::to_string((*left)--) + " ";
                        return true;
                    }
                    trailers.add("Count", "3");
                    return false;
                },
                "text/plain");
        }
        ex.respond(app::view_of(res));
    });
    auto c = h.connect();
    H2Client client(*c);
    const int32_t bytes = client.request("GET", "/bytes");
    const int32_t streamed = client.request("GET", "/stream");
    ASSERT_TRUE(client.finish(bytes));
    ASSERT_TRUE(client.finish(streamed));
    EXPECT_EQ(client.stream(bytes).body, "hello");
    EXPECT_EQ(client.stream(bytes).trailers, (H2Fields{{"checksum", "abc"}}));
    EXPECT_EQ(client.stream(streamed).body, "piece3 piece2 piece1 ");
    EXPECT_EQ(client.stream(streamed).trailers, (H2Fields{{"count", "3"}}));  // lowercased
    EXPECT_TRUE(client.stream(streamed).ended);
    EXPECT_EQ(client.stream(streamed).close_code, uint32_t(NGHTTP2_NO_ERROR));
}

TEST(EngineHttp2, ABodyOverTheLimitIs413AndTheConnectionServesOn) {
    ServerConfig config;
    config.limits.max_body = 1000;
    EngineHarness h(config);
    auto c = h.connect();
    H2Client client(*c);
    const std::string body(5000, 'x');
    // Announced too large, and too large without an announcement (found as DATA arrives).
    const int32_t announced = client.request("POST", "/a", {{"content-length", "5000"}}, &body);
    const int32_t found = client.request("POST", "/b", {}, &body);
    ASSERT_TRUE(client.finish(announced));
    ASSERT_TRUE(client.finish(found));
    for (int32_t id : {announced, found}) {
        EXPECT_EQ(client.stream(id).status, 413) << "stream " << id;
        EXPECT_EQ(client.stream(id).body, "413 Content Too Large: content too large\n");
    }
    EXPECT_EQ(h.app().protocol_errors(), (std::vector<int>{413, 413}));
    const int32_t after = client.request("GET", "/after");
    ASSERT_TRUE(client.finish(after));
    EXPECT_EQ(client.stream(after).body, "GET /after body=");
    EXPECT_FALSE(client.goaway());
    EXPECT_EQ(h.app().bodies(), std::vector<std::string>{""});  // only /after was served
}

TEST(EngineHttp2, AHeaderListOverTheLimitIs431) {
    ServerConfig config;
    config.limits.max_header_bytes = 1024;
    EngineHarness h(config);
    auto c = h.connect();
    H2Client client(*c);
    const int32_t big = client.request("GET", "/big", {{"x-big", std::string(1500, 'b')}});
    ASSERT_TRUE(client.finish(big));
    EXPECT_EQ(client.stream(big).status, 431);
    EXPECT_EQ(h.app().protocol_errors(), std::vector<int>{431});
    const int32_t fine = client.request("GET", "/fine", {{"x-small", std::string(500, 's')}});
    ASSERT_TRUE(client.finish(fine));
    EXPECT_EQ(client.stream(fine).status, 200);
    EXPECT_EQ(client.server_settings().at(NGHTTP2_SETTINGS_MAX_HEADER_LIST_SIZE), 1024u);
}

TEST(EngineHttp2, StreamsOverTheConcurrencyLimitAreRefused) {
    ServerConfig config;
    config.http2.max_concurrent_streams = 2;
    EngineHarness h(config, [&](Exchange& ex) { h.app().keep(ex.defer()); });
    auto c = h.connect();
    H2Client client(*c);
    // Sent before the client has read the server's SETTINGS: all three leave.
    const int32_t a = client.request("GET", "/a");
    const int32_t b = client.request("GET", "/b");
    const int32_t third = client.request("GET", "/c");
    ASSERT_TRUE(client.finish(third));
    EXPECT_TRUE(client.stream(third).reset_by_server);
    EXPECT_EQ(client.stream(third).reset_code, uint32_t(NGHTTP2_REFUSED_STREAM));
    auto deferred = h.app().take_deferred(2);
    ASSERT_EQ(deferred.size(), 2u);
    for (auto& d : deferred) d.complete(app::reply_of(reply("ok")));
    ASSERT_TRUE(client.finish(a));
    ASSERT_TRUE(client.finish(b));
    EXPECT_EQ(client.stream(a).body, "ok");
    EXPECT_EQ(client.stream(b).body, "ok");
    EXPECT_TRUE(h.app().wait_served(2));
    EXPECT_FALSE(h.app().wait_served(3, 0ms));
}

TEST(EngineHttp2, TheDrainSendsGoawayAndTheStreamInFlightStillFinishes) {
    EngineHarness h({}, [&](Exchange& ex) { h.app().keep(ex.defer()); });
    auto c = h.connect();
    H2Client client(*c);
    const int32_t id = client.request("GET", "/slow");
    std::vector<Deferred> deferred;
    ASSERT_TRUE(
        client.run_until([&] { return (deferred = h.app().take_deferred(1, 10ms)).size() == 1; }));
    h.io().begin_drain();  // close_when_idle on the connection
    ASSERT_TRUE(client.run_until([&] { return client.goaway(); }));
    EXPECT_EQ(client.goaway_code(), uint32_t(NGHTTP2_NO_ERROR));
    EXPECT_EQ(client.goaway_last_stream(), id);
    EXPECT_FALSE(client.stream(id).closed);
    deferred[0].complete(app::reply_of(reply("finished")));
    ASSERT_TRUE(client.finish(id));
    EXPECT_EQ(client.stream(id).status, 200);
    EXPECT_EQ(client.stream(id).body, "finished");
    EXPECT_TRUE(client.wait_eof());  // then the connection ends
}

TEST(EngineHttp2, TheDrainClosesAnIdleConnectionWithGoaway) {
    EngineHarness h;
    auto c = h.connect();
    H2Client client(*c);
    const int32_t id = client.request("GET", "/once");
    ASSERT_TRUE(client.finish(id));
    h.io().begin_drain();
    EXPECT_TRUE(client.wait_eof());
    EXPECT_TRUE(client.goaway());
    EXPECT_EQ(client.goaway_code(), uint32_t(NGHTTP2_NO_ERROR));
    EXPECT_EQ(client.goaway_last_stream(), id);
}

}  // namespace
}  // namespace rivet::engine::testing
