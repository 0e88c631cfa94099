// The public Limits and Timeouts reach the engine field by field, each with its own value; the
// HTTP/2 switch reaches it too.
#include "app/server_options.hpp"

#include <gtest/gtest.h>

#include "core/field_count.hpp"

TEST(ServerOptions, EveryLimitReachesTheEngine) {
    rivet::Limits l;
    l.max_request_line = 1;
    l.max_header_bytes = 2;
    l.max_headers = 3;
    l.max_body = 4;
    l.max_connections = 5;
    l.max_requests_per_connection = 6;
    l.max_pipelined = 7;
    l.output_high_water = 8;
    l.max_buffered_bodies = 9;
    l.min_body_rate = 11;
    l.min_send_rate = 12;
    auto e = rivet::app::engine_limits(l);
    EXPECT_EQ(e.max_request_line, 1u);
    EXPECT_EQ(e.max_header_bytes, 2u);
    EXPECT_EQ(e.max_headers, 3u);
    EXPECT_EQ(e.max_body, 4u);
    EXPECT_EQ(e.max_connections, 5u);
    EXPECT_EQ(e.max_requests_per_connection, 6u);
    EXPECT_EQ(e.max_pipelined, 7u);
    EXPECT_EQ(e.output_high_water, 8u);
    EXPECT_EQ(e.max_buffered_bodies, 9u);
    EXPECT_EQ(e.min_body_rate, 11u);
    EXPECT_EQ(e.min_send_rate, 12u);
}

TEST(ServerOptions, EveryTimeoutReachesTheEngine) {
    rivet::Timeouts t;
    t.header_ms = 1;
    t.body_ms = 2;
    t.idle_ms = 3;
    t.write_ms = 4;
    t.linger_ms = 5;
    t.drain_ms = 6;
    t.drain_grace_ms = 7;
    t.handshake_ms = 8;
    auto e = rivet::app::engine_timeouts(t);
    EXPECT_EQ(e.header_ms, 1u);
    EXPECT_EQ(e.body_ms, 2u);
    EXPECT_EQ(e.idle_ms, 3u);
    EXPECT_EQ(e.write_ms, 4u);
    EXPECT_EQ(e.linger_ms, 5u);
    EXPECT_EQ(e.drain_ms, 6u);
    EXPECT_EQ(e.drain_grace_ms, 7u);
    EXPECT_EQ(e.handshake_ms, 8u);
}

TEST(ServerOptions, Http2IsOnByDefaultAndCanBeTurnedOff) {
    rivet::RunOptions o;
    EXPECT_TRUE(o.http2);
    EXPECT_TRUE(rivet::app::server_config(o).http2.enabled);
    o.http2 = false;
    EXPECT_FALSE(rivet::app::server_config(o).http2.enabled);
}

namespace {
struct Three {
    int a = 1;
    double b = 2;
    const char* c = nullptr;
};
struct Empty {};
}  // namespace

// The count the conversion's compile-time checks rely on.
static_assert(rivet::core::field_count<Three> == 3);
static_assert(rivet::core::field_count<Empty> == 0);
static_assert(rivet::core::field_count<rivet::Limits> == 11);
static_assert(rivet::core::field_count<rivet::Timeouts> == 8);
