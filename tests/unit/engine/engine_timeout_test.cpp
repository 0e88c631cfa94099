// Timeouts: header, idle keep-alive, body and write. Each test shortens one timeout and leaves
// the others long, so the one that closes the connection is the one under test. The loop's
// timers have 100 ms ticks: bounds are generous, and only "not before" and "well within a
// second" are asserted.
#include <gtest/gtest.h>
#include <sys/socket.h>

#include <chrono>
#include <string>
#include <thread>

#include "engine_harness.hpp"

namespace rivet::engine::testing {
namespace {

using Clock = std::chrono::steady_clock;

ServerConfig long_timeouts() {
    ServerConfig config;
    config.timeouts.header_ms = 10'000;
    config.timeouts.body_ms = 10'000;
    config.timeouts.idle_ms = 10'000;
    config.timeouts.write_ms = 10'000;
    return config;
}

Millis since(Clock::time_point start) {
    return std::chrono::duration_cast<Millis>(Clock::now() - start);
}

TEST(EngineTimeouts, HeaderTimeoutClosesAHalfSentHead) {
    ServerConfig config = long_timeouts();
    config.timeouts.header_ms = 200;
    EngineHarness h(config);
    auto c = h.connect();
    auto start = Clock::now();
    c->send("GET /slow HTTP/1.1\r\nHost: t\r\nX-Half: ");
    EXPECT_EQ(c->read_for(50ms), "");
    EXPECT_FALSE(c->eof());
    ASSERT_TRUE(c->wait_eof(1500ms));
    EXPECT_GE(since(start), 150ms);
    EXPECT_EQ(c->received(), "");  // closed quietly, no answer
    EXPECT_TRUE(h.app().bodies().empty());
}

TEST(EngineTimeouts, HeaderTimeoutIsNotRestartedByEachByte) {
    // A slow sender trickling a byte at a time must not hold the connection forever.
    ServerConfig config = long_timeouts();
    config.timeouts.header_ms = 200;
    EngineHarness h(config);
    auto c = h.connect();
    auto start = Clock::now();
    std::string head = "GET /slowloris HTTP/1.1\r\nHost: t\r\nX-Drip: ";
    c->send(head);
    while (!c->eof() && since(start) < 1500ms) {
        c->send("x");
        c->read_for(40ms);
    }
    EXPECT_TRUE(c->eof());
    EXPECT_LT(since(start), 1500ms);
}

TEST(EngineTimeouts, HeaderTimeoutOfALaterRequestCountsFromItsFirstByte) {
    // After a keep-alive rest longer than the header timeout, a new head gets its full time.
    ServerConfig config = long_timeouts();
    config.timeouts.header_ms = 300;
    EngineHarness h(config);
    auto c = h.connect();
    c->send(get("/1"));
    ASSERT_EQ(c->read_responses(1).size(), 1u);
    EXPECT_EQ(c->read_for(400ms), "");
    auto start = Clock::now();
    c->send("GET /2 HTTP/1.1\r\nHo");
    EXPECT_EQ(c->read_for(100ms), "");
    EXPECT_FALSE(c->eof());
    c->send("st: t\r\n\r\n");
    auto got = c->read_responses(2);
    ASSERT_EQ(got.size(), 2u) << "closed after " << since(start).count() << " ms";
    EXPECT_EQ(got[1].body, "GET /2 body=");
}

TEST(EngineTimeouts, IdleKeepAliveConnectionIsClosed) {
    ServerConfig config = long_timeouts();
    config.timeouts.idle_ms = 200;
    EngineHarness h(config);
    auto c = h.connect();
    c->send(get("/once"));
    auto got = c->read_responses(1);
    ASSERT_EQ(got.size(), 1u);
    EXPECT_EQ(got[0].field("Connection"), "");  // kept alive
    auto start = Clock::now();
    EXPECT_EQ(c->read_for(50ms), "");
    ASSERT_TRUE(c->wait_eof(1500ms));
    EXPECT_GE(since(start), 100ms);
}

TEST(EngineTimeouts, KeepAliveConnectionWithinTheIdleTimeoutStaysUsable) {
    // The control for the idle test: a shorter pause than the timeout keeps the connection.
    ServerConfig config = long_timeouts();
    config.timeouts.idle_ms = 1000;
    EngineHarness h(config);
    auto c = h.connect();
    c->send(get("/1"));
    ASSERT_EQ(c->read_responses(1).size(), 1u);
    EXPECT_EQ(c->read_for(200ms), "");
    c->send(get("/2"));
    auto got = c->read_responses(2);
    ASSERT_EQ(got.size(), 2u);
    EXPECT_EQ(got[1].body, "GET /2 body=");
}

TEST(EngineTimeouts, BodyTimeoutClosesAStalledBody) {
    ServerConfig config = long_timeouts();
    config.timeouts.body_ms = 200;
    EngineHarness h(config);
    auto c = h.connect();
    auto start = Clock::now();
    c->send("POST /up HTTP/1.1\r\nHost: t\r\nContent-Length: 10\r\n\r\nabc");
    EXPECT_EQ(c->read_for(50ms), "");
    ASSERT_TRUE(c->wait_eof(1500ms));
    EXPECT_GE(since(start), 150ms);
    EXPECT_TRUE(h.app().bodies().empty());
}

TEST(EngineTimeouts, BodyTimeoutRestartsWithEachPiece) {
    // Unlike the head's, the body's clock runs between reads: a steady sender is served.
    ServerConfig config = long_timeouts();
    config.timeouts.body_ms = 300;
    config.limits.min_body_rate = 0;  // 10 bytes a second: the rate is tested on its own
    EngineHarness h(config);
    auto c = h.connect();
    c->send("POST /up HTTP/1.1\r\nHost: t\r\nContent-Length: 6\r\n\r\n");
    c->send_in_pieces("abcdef", 1, 100ms);  // 500 ms in all, longer than the timeout
    auto got = c->read_responses(1);
    ASSERT_EQ(got.size(), 1u);
    EXPECT_EQ(got[0].body, "POST /up body=abcdef");
}

TEST(EngineTimeouts, WriteTimeoutClosesAClientThatDoesNotRead) {
    ServerConfig config = long_timeouts();
    config.timeouts.write_ms = 200;
    const size_t kBody = 8 << 20;  // far more than the socket buffers hold
    EngineHarness h(config, [&](Exchange& ex) {
        ex.respond(rivet::app::view_of(
            rivet::Response(200).body(std::string(kBody, 'w'), "application/octet-stream")));
    });
    auto c = h.connect(16 * 1024);
    c->send(get("/download"));
    std::this_thread::sleep_for(700ms);  // not reading, well past the write timeout
    ASSERT_TRUE(c->wait_eof(1500ms));
    EXPECT_TRUE(c->received().starts_with("HTTP/1.1 200 OK\r\n"));
    EXPECT_LT(c->received().size(), kBody);  // cut off before the end
}

TEST(EngineTimeouts, WriteTimeoutSparesASlowButSteadyReader) {
    // The clock runs between writes that make progress, not over the whole answer.
    ServerConfig config = long_timeouts();
    config.timeouts.write_ms = 300;
    const size_t kBody = 1 << 20;
    EngineHarness h(config, [&](Exchange& ex) {
        ex.respond(rivet::app::view_of(
            rivet::Response(200).body(std::string(kBody, 's'), "application/octet-stream")));
    });
    auto c = h.connect();
    c->send(get("/download"));
    std::string got;
    char buf[64 * 1024];
    auto start = Clock::now();
    // About 64 KiB per 50 ms: the whole answer takes longer than the write timeout.
    while (got.size() < kBody && since(start) < 1800ms) {
        std::this_thread::sleep_for(50ms);
        ssize_t n = recv(c->fd(), buf, sizeof buf, MSG_DONTWAIT);
        if (n == 0) break;
        if (n > 0) got.append(buf, size_t(n));
    }
    EXPECT_GT(since(start), 300ms);
    EXPECT_GT(got.size(), kBody);  // all of it arrived: head and body
}

}  // namespace
}  // namespace rivet::engine::testing
