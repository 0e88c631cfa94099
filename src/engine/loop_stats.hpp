// What the loops count: one plain struct for the figures, and the per-loop atomics they are
// read from.
#pragma once

#include <atomic>
#include <cstdint>

namespace rivet::engine {

struct ServerStats {
    uint64_t accepted = 0;
    uint64_t requests = 0;
    uint64_t open_connections = 0;
    uint64_t bytes_in = 0;         // read from client sockets
    uint64_t bytes_out = 0;        // written to them (sendfile included)
    uint64_t bodies_waiting = 0;   // connections whose buffered body waits for the body budget
    uint64_t body_bytes_held = 0;  // reserved by buffered bodies now (Server::stats only)
    uint64_t cancelled = 0;        // deferred answers whose connection closed before they came
    uint64_t proxy_refused = 0;    // connections closed for an invalid PROXY protocol header

    ServerStats& operator+=(const ServerStats& o) {
        accepted += o.accepted;
        requests += o.requests;
        open_connections += o.open_connections;
        bytes_in += o.bytes_in;
        bytes_out += o.bytes_out;
        bodies_waiting += o.bodies_waiting;
        body_bytes_held += o.body_bytes_held;
        cancelled += o.cancelled;
        proxy_refused += o.proxy_refused;
        return *this;
    }
};

// Per-loop counters: written only by the loop's thread, read by others for monitoring.
// Atomic so that those reads are well-defined, but bumped with a plain load and store: one
// writer needs no locked read-modify-write on the request path.
struct LoopStats {
    std::atomic<uint64_t> accepted{0};
    std::atomic<uint64_t> requests{0};
    std::atomic<uint64_t> open_connections{0};
    std::atomic<uint64_t> bytes_in{0};
    std::atomic<uint64_t> bytes_out{0};
    std::atomic<uint64_t> cancelled{0};
    std::atomic<uint64_t> bodies_waiting{0};  // a gauge
    std::atomic<uint64_t> proxy_refused{0};

    static void bump(std::atomic<uint64_t>& counter, uint64_t n = 1) {
        counter.store(counter.load(std::memory_order_relaxed) + n, std::memory_order_relaxed);
    }

    ServerStats read() const {  // from any thread
        constexpr auto r = std::memory_order_relaxed;
        return {accepted.load(r),
                requests.load(r),
                open_connections.load(r),
                bytes_in.load(r),
                bytes_out.load(r),
                bodies_waiting.load(r),
                0,
                cancelled.load(r),
                proxy_refused.load(r)};
    }
};

}  // namespace rivet::engine
