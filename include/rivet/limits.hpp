// rivet::Limits and rivet::Timeouts: how much a client may send and how long it may take.
// Part of rivet::RunOptions; App::reconfigure() applies new values to running servers.
#pragma once

#include <cstddef>
#include <cstdint>

namespace rivet {

struct Limits {
    // One request; each limit crossed gets its own status, then the connection closes.
    size_t max_request_line = 8 * 1024;   // 414 URI Too Long (empty lines before it count)
    size_t max_header_bytes = 16 * 1024;  // 431: the field block, up to its final empty line
    size_t max_headers = 100;             // 431
    uint64_t max_body = 8 * 1024 * 1024;  // 413: Content-Length, or a chunked body's decoded size

    // Connections.
    size_t max_connections = 100'000;          // past it, accepting pauses until one closes
    uint32_t max_requests_per_connection = 0;  // 0: unlimited
    // Answers owed in order on one connection (worked on, or made and queued behind one that is)
    // before reading pauses. With output_high_water, what one connection that reads nothing can
    // hold: that many bytes, plus the answers to the requests already dispatched.
    size_t max_pipelined = 16;
    size_t output_high_water = 1 << 20;  // unsent bytes on one connection past which reading pauses

    // The whole server: bytes held for buffered request bodies that are still arriving and for
    // answers that clients have not taken yet (a client that does not read), over all
    // connections. Past it, connections with a body to receive stop being read until bytes are
    // freed; one that waits longer than the body timeout gets 503 with Retry-After. A body
    // alone is always read, whatever its size.
    uint64_t max_buffered_bodies = 256 * 1024 * 1024;
    // The slowest a request body may arrive while the server wants it, in bytes a second,
    // judged over each body timeout (Timeouts::body_ms) from the body's start: a window that
    // brings less is answered 408 and the connection closes. 0: no minimum.
    uint64_t min_body_rate = 500;
    // The slowest a client may take its answers while some wait for it, in bytes a second,
    // judged over each write timeout (Timeouts::write_ms): a window that moves less closes the
    // connection, so a client that reads a little now and then cannot keep its unsent output
    // for ever. 0: no minimum (the write timeout alone, between writes that move bytes).
    uint64_t min_send_rate = 500;
};

// In milliseconds. A timeout that runs out closes the connection without an answer, as nginx does,
// but for a request whose body stops arriving: that one is answered 408 first.
struct Timeouts {
    uint64_t header_ms = 10'000;  // the whole request head, from its first byte (slowloris)
    uint64_t body_ms = 60'000;    // between two reads of a request body (or waiting for the budget)
    uint64_t idle_ms = 60'000;    // a keep-alive connection waiting for its next request
    uint64_t write_ms = 60'000;  // a client with answers waiting takes some in each (min_send_rate)
    uint64_t linger_ms = 2'000;  // reading what a client still sends after our close
    uint64_t drain_ms = 10'000;  // graceful stop: requests in flight get this long
    // App::run's lame-duck period at SIGTERM/SIGINT, before that drain: everything is still
    // served, each answer says "Connection: close" and /healthz answers 503, so health checks
    // take the instance out of a load balancer before it stops accepting. 0: none.
    uint64_t drain_grace_ms = 0;
    // A TLS connection's handshake, from the accept: a slow or silent client cannot hold a
    // connection slot past it.
    uint64_t handshake_ms = 10'000;
};

}  // namespace rivet
