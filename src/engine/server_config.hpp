// ServerConfig: everything the engine needs to know to listen, parse and time out. The public
// rivet::Limits and rivet::Timeouts (include/rivet/limits.hpp, where each field is explained)
// are above this layer; App converts them in one place (app/server_options.hpp), field by field
// by name, and refuses to compile when a field is on one side only.
#pragma once

#include <cstddef>
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "http/request_parser.hpp"
#include "net/ip_network.hpp"

namespace rivet::tls {
class Context;
}

namespace rivet::engine {

struct Limits {
    size_t max_request_line = 8 * 1024;
    size_t max_header_bytes = 16 * 1024;
    size_t max_headers = 100;
    uint64_t max_body = 8 * 1024 * 1024;
    size_t max_connections = 100'000;
    uint32_t max_requests_per_connection = 0;
    size_t max_pipelined = 16;
    size_t output_high_water = 1 << 20;
    // All loops together (BodyBudget): request bodies arriving and answers clients have not
    // taken yet.
    uint64_t max_buffered_bodies = 256 * 1024 * 1024;
    uint64_t min_body_rate = 500;  // bytes a second, over each body timeout (Pace); 0: none
    uint64_t min_send_rate = 500;  // bytes a second, over each write timeout (Pace); 0: none
};

struct Timeouts {  // milliseconds
    uint64_t header_ms = 10'000;
    uint64_t body_ms = 60'000;
    uint64_t idle_ms = 60'000;
    uint64_t write_ms = 60'000;
    uint64_t linger_ms = 2'000;
    uint64_t drain_ms = 10'000;
    uint64_t drain_grace_ms = 0;     // App::run's; the engine has begin_lame_duck()
    uint64_t handshake_ms = 10'000;  // a TLS handshake, from the accept
};

// HTTP/2 (engine/http2/): on TLS listeners by ALPN "h2", on the plain port by prior knowledge
// (a connection that starts with the preface). Off: ALPN offers only http/1.1 and a preface is
// HTTP/1.1's bad request. The numbers are what the SETTINGS frame announces and the session
// holds each stream and connection to; the header limits are Limits' (max_header_bytes).
struct Http2Config {
    bool enabled = true;
    uint32_t max_concurrent_streams = 100;
    // The request body a stream may send before the handler has taken it (its flow-control
    // window), and all streams of a connection together: what one connection can make the
    // server hold for bodies not yet read.
    uint32_t stream_window = 256 * 1024;
    uint32_t connection_window = 16 * 1024 * 1024;
    // Frames that cost the server work and give the client nothing, each within one second of a
    // connection (SETTINGS, PING, PRIORITY, empty DATA, and streams the client reset before their
    // answer: the rapid-reset attack): past it, GOAWAY ENHANCE_YOUR_CALM.
    uint32_t max_control_frames_per_s = 1000;
    uint32_t max_resets_per_s = 100;
};

struct ServerConfig {
    std::string host = "0.0.0.0";
    uint16_t port = 8080;
    unsigned threads = 0;  // I/O loops; 0 = one per usable CPU
    // Already-bound listening sockets (systemd socket activation, an in-place upgrade), served
    // instead of binding host:port; the Server owns them. Every one is accepted from: a loop may
    // take several, and loops left without one get a socket of their own beside them.
    std::vector<int> listen_fds;

    Limits limits;
    Timeouts timeouts;
    Http2Config http2;

    // PROXY protocol (v1 and v2) on both listeners: a connection from an address in
    // `proxy_trusted` may begin with a header naming the client (Connection's
    // Stage::ProxyHeader; on the TLS listener before the handshake), whose address then replaces
    // the peer's. Others' headers are never read. Fixed at start.
    bool proxy_protocol = false;
    net::NetworkList proxy_trusted;

    // TLS: with a context, a second set of listeners (one per loop) on tls_port (0: any free
    // port) serves HTTPS beside the plain port; every connection accepted there starts with a
    // handshake (Connection's Stage::Handshake). `tls_listen_fds`: inherited sockets for it, as
    // listen_fds. reconfigure() replaces the context (new certificates after a reload): new
    // handshakes use the new one, open connections keep theirs.
    std::shared_ptr<const tls::Context> tls;
    uint16_t tls_port = 8443;
    std::vector<int> tls_listen_fds;
};

// The parser's share of the limits. The body limit is the engine's to check, after the
// application has planned the request's body (a route may allow more than max_body).
inline http::ParserLimits parser_limits(const Limits& l) {
    return {l.max_request_line, l.max_header_bytes, l.max_headers, UINT64_MAX};
}

}  // namespace rivet::engine
