// What the loops count: one plain struct for the figures, and the per-loop atomics they are
// read from.
#pragma once

#include <array>
#include <atomic>
#include <cstddef>
#include <cstdint>
#include <string_view>

namespace rivet::engine {

// Why a TLS handshake did not finish (metrics: rivet_tls_handshake_failures_total{reason}).
enum class TlsFailure : uint8_t {
    PlainHttp,   // plain HTTP sent to the TLS port: answered 400 and closed
    Timeout,     // the handshake timeout ran out (a slow or silent client)
    PeerClosed,  // the client closed or reset during the handshake
    NoCommon,    // no protocol version, cipher suite or ALPN protocol in common
    PeerAlert,   // the client refused us with an alert (an unknown CA, a bad certificate)
    Malformed,   // bytes that are not TLS, or a TLS message out of place
};
inline constexpr size_t kTlsFailureKinds = 6;
inline const char* tls_failure_name(TlsFailure f) {
    constexpr const char* names[kTlsFailureKinds] = {"plain_http", "timeout",    "peer_closed",
                                                     "no_common",  "peer_alert", "malformed"};
    return names[size_t(f)];
}

// Finished handshakes, by protocol version and kind (metrics: rivet_tls_handshakes_total).
struct TlsHandshakes {
    uint64_t full_tls12 = 0, full_tls13 = 0, resumed_tls12 = 0, resumed_tls13 = 0;
};

// Close codes counted one by one (1000..1015), then the application's (3000..4999) and the rest.
inline constexpr size_t kWebSocketCloseKinds = 18;
inline size_t websocket_close_kind(uint16_t code) {
    if (code >= 1000 && code <= 1015) return code - 1000;
    return code >= 3000 && code <= 4999 ? 16 : 17;
}
inline std::string_view websocket_close_label(size_t kind) {
    constexpr std::string_view labels[kWebSocketCloseKinds] = {
        "1000", "1001", "1002", "1003", "1004", "1005", "1006", "1007",        "1008",
        "1009", "1010", "1011", "1012", "1013", "1014", "1015", "application", "other"};
    return labels[kind];
}

// WebSocket sessions (metrics: rivet_websocket_*).
struct WebSocketStats {
    uint64_t opened = 0, closed = 0, messages_in = 0, messages_out = 0, violations = 0,
             slow_closed = 0, bytes_in = 0, bytes_out = 0;
    std::array<uint64_t, kWebSocketCloseKinds> closes{};  // by websocket_close_kind
    WebSocketStats& operator+=(const WebSocketStats& o) {
        bytes_in += o.bytes_in;
        bytes_out += o.bytes_out;
        for (size_t i = 0; i < kWebSocketCloseKinds; ++i) closes[i] += o.closes[i];
        opened += o.opened;
        closed += o.closed;
        messages_in += o.messages_in;
        messages_out += o.messages_out;
        violations += o.violations;
        slow_closed += o.slow_closed;
        return *this;
    }
};

// HTTP/2 error codes (RFC 9113 §7) counted one by one (0x0..0xd), then any other.
inline constexpr size_t kHttp2ErrorKinds = 15;
inline size_t http2_error_kind(uint32_t code) {
    return code <= 0xd ? code : 14;
}
inline std::string_view http2_error_label(size_t kind) {
    constexpr std::string_view labels[kHttp2ErrorKinds] = {"NO_ERROR",
                                                           "PROTOCOL_ERROR",
                                                           "INTERNAL_ERROR",
                                                           "FLOW_CONTROL_ERROR",
                                                           "SETTINGS_TIMEOUT",
                                                           "STREAM_CLOSED",
                                                           "FRAME_SIZE_ERROR",
                                                           "REFUSED_STREAM",
                                                           "CANCEL",
                                                           "COMPRESSION_ERROR",
                                                           "CONNECT_ERROR",
                                                           "ENHANCE_YOUR_CALM",
                                                           "INADEQUATE_SECURITY",
                                                           "HTTP_1_1_REQUIRED",
                                                           "other"};
    return labels[kind];
}
// Why a connection was told to calm down (GOAWAY ENHANCE_YOUR_CALM).
enum class Http2Abuse : uint8_t {
    RapidReset,    // streams reset by the client before their answer (CVE-2023-44487)
    Continuation,  // a header block past the limit in CONTINUATION frames (CVE-2024-27316)
    Settings,      // SETTINGS frames past the per-second bound
    Ping,
    Priority,
    EmptyData,  // DATA frames with no payload and no END_STREAM
    Hpack,      // a header block that decodes far past the limit (an HPACK bomb)
};
inline constexpr size_t kHttp2AbuseKinds = 7;
inline std::string_view http2_abuse_label(Http2Abuse a) {
    constexpr std::string_view labels[kHttp2AbuseKinds] = {
        "rapid_reset", "continuation", "settings", "ping", "priority", "empty_data", "hpack"};
    return labels[size_t(a)];
}

// HTTP/2 connections (metrics: rivet_http2_*).
struct Http2Stats {
    uint64_t connections = 0, streams = 0, streams_closed = 0, stalls = 0;
    std::array<uint64_t, kHttp2ErrorKinds> goaways_sent{}, goaways_received{};
    std::array<uint64_t, kHttp2AbuseKinds> abuse{};
    Http2Stats& operator+=(const Http2Stats& o) {
        connections += o.connections;
        streams += o.streams;
        streams_closed += o.streams_closed;
        stalls += o.stalls;
        for (size_t i = 0; i < kHttp2ErrorKinds; ++i) {
            goaways_sent[i] += o.goaways_sent[i];
            goaways_received[i] += o.goaways_received[i];
        }
        for (size_t i = 0; i < kHttp2AbuseKinds; ++i) abuse[i] += o.abuse[i];
        return *this;
    }
};

struct ServerStats {
    uint64_t accepted = 0;
    uint64_t requests = 0;
    uint64_t open_connections = 0;
    uint64_t idle_connections = 0;    // keep-alive connections resting between requests
    uint64_t bytes_in = 0;            // read from client sockets
    uint64_t bytes_out = 0;           // written to them (sendfile included)
    uint64_t bodies_waiting = 0;      // connections whose buffered body waits for the body budget
    uint64_t body_bytes_held = 0;     // reserved by buffered bodies now (Server::stats only)
    uint64_t unsent_bytes_held = 0;   // answers clients have not taken yet (Server::stats only)
    uint64_t cancelled = 0;           // deferred answers whose connection closed before they came
    uint64_t answered = 0;            // requests answered within serve() (not deferred)
    uint64_t deferred_completed = 0;  // deferred answers completed (before any cancel)
    uint64_t proxy_refused = 0;       // connections closed for an invalid PROXY protocol header
    TlsHandshakes tls_handshakes;
    std::array<uint64_t, kTlsFailureKinds> tls_failures{};
    WebSocketStats websockets;
    Http2Stats http2;

    ServerStats& operator+=(const ServerStats& o) {
        accepted += o.accepted;
        requests += o.requests;
        open_connections += o.open_connections;
        idle_connections += o.idle_connections;
        bytes_in += o.bytes_in;
        bytes_out += o.bytes_out;
        bodies_waiting += o.bodies_waiting;
        body_bytes_held += o.body_bytes_held;
        unsent_bytes_held += o.unsent_bytes_held;
        cancelled += o.cancelled;
        answered += o.answered;
        deferred_completed += o.deferred_completed;
        proxy_refused += o.proxy_refused;
        tls_handshakes.full_tls12 += o.tls_handshakes.full_tls12;
        tls_handshakes.full_tls13 += o.tls_handshakes.full_tls13;
        tls_handshakes.resumed_tls12 += o.tls_handshakes.resumed_tls12;
        tls_handshakes.resumed_tls13 += o.tls_handshakes.resumed_tls13;
        for (size_t i = 0; i < kTlsFailureKinds; ++i) tls_failures[i] += o.tls_failures[i];
        websockets += o.websockets;
        http2 += o.http2;
        return *this;
    }

    // Requests served and not answered yet: each one is answered within serve(), or deferred
    // and then completed or cancelled, exactly once. The counters are read one after the other
    // while the loops run: an answer counted after its request was read must not wrap it.
    uint64_t in_flight() const {
        uint64_t ended = answered + deferred_completed + cancelled;
        return requests > ended ? requests - ended : 0;
    }
};

// Per-loop counters: written only by the loop's thread, read by others for monitoring.
// Atomic so that those reads are well-defined, but bumped with a plain load and store: one
// writer needs no locked read-modify-write on the request path.
struct LoopStats {
    std::atomic<uint64_t> accepted{0};
    std::atomic<uint64_t> requests{0};
    std::atomic<uint64_t> open_connections{0};
    std::atomic<uint64_t> idle_connections{0};  // a gauge: Connection::Stage::Resting
    std::atomic<uint64_t> bytes_in{0};
    std::atomic<uint64_t> bytes_out{0};
    std::atomic<uint64_t> cancelled{0};
    std::atomic<uint64_t> answered{0};
    // From any thread (a worker completes a Deferred): the one counter here added with a locked
    // add; a deferred answer is rare beside the loop's own.
    std::atomic<uint64_t> deferred_completed{0};
    std::atomic<uint64_t> bodies_waiting{0};  // a gauge
    std::atomic<uint64_t> proxy_refused{0};
    std::atomic<uint64_t> tls_full_tls12{0}, tls_full_tls13{0}, tls_resumed_tls12{0},
        tls_resumed_tls13{0};
    std::array<std::atomic<uint64_t>, kTlsFailureKinds> tls_failures{};
    // WebSocket sessions (engine/websocket/): opened and closed (open = the difference), data
    // messages each way, connections failed for a protocol violation, slow readers cut off.
    std::atomic<uint64_t> websockets_open{0}, websockets_closed{0}, websocket_messages_in{0},
        websocket_messages_out{0}, websocket_violations{0}, websocket_slow_closed{0},
        websocket_bytes_in{0}, websocket_bytes_out{0};
    std::array<std::atomic<uint64_t>, kWebSocketCloseKinds> websocket_closes{};
    // HTTP/2 (engine/http2/): connections and streams begun, streams ended (open = the
    // difference), streams whose output waited on a window held at zero past the write timeout,
    // GOAWAYs each way by code, abuse by kind.
    std::atomic<uint64_t> http2_connections{0}, http2_streams{0}, http2_streams_closed{0},
        http2_stalls{0};
    std::array<std::atomic<uint64_t>, kHttp2ErrorKinds> http2_goaways_sent{},
        http2_goaways_received{};
    std::array<std::atomic<uint64_t>, kHttp2AbuseKinds> http2_abuse{};

    static void bump(std::atomic<uint64_t>& counter, uint64_t n = 1) {
        counter.store(counter.load(std::memory_order_relaxed) + n, std::memory_order_relaxed);
    }

    ServerStats read() const {  // from any thread
        constexpr auto r = std::memory_order_relaxed;
        ServerStats s;
        s.accepted = accepted.load(r);
        s.requests = requests.load(r);
        s.open_connections = open_connections.load(r);
        s.idle_connections = idle_connections.load(r);
        s.bytes_in = bytes_in.load(r);
        s.bytes_out = bytes_out.load(r);
        s.bodies_waiting = bodies_waiting.load(r);
        s.cancelled = cancelled.load(r);
        s.answered = answered.load(r);
        s.deferred_completed = deferred_completed.load(r);
        s.proxy_refused = proxy_refused.load(r);
        s.tls_handshakes = {tls_full_tls12.load(r), tls_full_tls13.load(r),
                            tls_resumed_tls12.load(r), tls_resumed_tls13.load(r)};
        for (size_t i = 0; i < kTlsFailureKinds; ++i) s.tls_failures[i] = tls_failures[i].load(r);
        s.websockets = {websockets_open.load(r),       websockets_closed.load(r),
                        websocket_messages_in.load(r), websocket_messages_out.load(r),
                        websocket_violations.load(r),  websocket_slow_closed.load(r),
                        websocket_bytes_in.load(r),    websocket_bytes_out.load(r)};
        for (size_t i = 0; i < kWebSocketCloseKinds; ++i)
            s.websockets.closes[i] = websocket_closes[i].load(r);
        s.http2.connections = http2_connections.load(r);
        s.http2.streams = http2_streams.load(r);
        s.http2.streams_closed = http2_streams_closed.load(r);
        s.http2.stalls = http2_stalls.load(r);
        for (size_t i = 0; i < kHttp2ErrorKinds; ++i) {
            s.http2.goaways_sent[i] = http2_goaways_sent[i].load(r);
            s.http2.goaways_received[i] = http2_goaways_received[i].load(r);
        }
        for (size_t i = 0; i < kHttp2AbuseKinds; ++i) s.http2.abuse[i] = http2_abuse[i].load(r);
        return s;
    }
};

}  // namespace rivet::engine
