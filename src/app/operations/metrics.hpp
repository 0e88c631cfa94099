// Metrics: request counters by route, protocol version and status class, and latency
// histograms by route, method and status class, kept per I/O loop and summed only when someone
// asks (GET /metrics, /status.json). Every series has its place from the start (no allocation on
// the request path): route patterns, never raw paths, so the label sets stay bounded.
//
// A loop's block is written by that loop's thread alone, so a count is a plain load and store
// (LoopStats' pattern: atomics only so that the reader's loads are well defined; no locked
// read-modify-write on the request path). One more block takes the worker pool's requests,
// with locked adds: those requests are heavy enough not to notice.
//
// The series are many and mostly never used (routes × methods × status classes × buckets: 240 KB
// per loop for the demo's routes), so they live in zeroed memory from calloc: a vector of
// atomics would write every one at start. A block of 128 KB or more (about 16 routes) is a
// fresh mapping whose pages the kernel maps only when first counted; a smaller one comes from
// the heap and glibc zeroes it, which is cheap at that size.
#pragma once

#include <array>
#include <atomic>
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include <rivet/method.hpp>

namespace rivet::app {

struct RouteLabel {
    std::string method;  // "GET"; "" for the pseudo-routes
    std::string route;   // the pattern as registered ("/users/:id"), or "(none)", ...
};

class Metrics {
public:
    // Upper bounds of the latency buckets, in µs (Prometheus' `le`, in seconds, is these/1e6).
    static constexpr uint64_t kBoundsUs[] = {25,     50,     100,     250,     500,     1000,
                                             2500,   5000,   10000,   25000,   50000,   100000,
                                             250000, 500000, 1000000, 2500000, 5000000, 10000000};
    static constexpr size_t kBuckets = std::size(kBoundsUs) + 1;  // the last one is +Inf
    static constexpr size_t kClasses = 5;                         // 1xx .. 5xx
    // The request's method: the nine known ones, then OTHER (rivet::Method's order).
    static constexpr size_t kMethods = size_t(Method::Other) + 1;
    // The request's protocol version (OpenTelemetry's network.protocol.version: "1.0", "1.1",
    // "2"). A request the HTTP/1 parser refused counts as 1.1, its default: its line may not
    // have said.
    enum Protocol : uint8_t { Http10, Http11, Http2 };
    static constexpr size_t kProtocols = 3;
    static constexpr const char* kProtocolLabels[kProtocols] = {"1.0", "1.1", "2"};
    static Protocol protocol_of(int version_major, int version_minor) {
        return version_major == 2 ? Http2 : version_minor == 0 ? Http10 : Http11;
    }

    Metrics(unsigned loops, std::vector<RouteLabel> routes);

    // On loop `loop`'s own thread only.
    void record(unsigned loop, uint32_t route, Protocol protocol, Method method, int status,
                uint64_t micros);
    void count_rate_limited(unsigned loop);
    // A limited request decided without the shared limit's Redis (RateLimitFallback).
    void count_rate_limit_fallback(unsigned loop);
    // From any thread.
    void record_shared(uint32_t route, Protocol protocol, Method method, int status,
                       uint64_t micros);
    void count_pool_rejected();
    void count_handler_exception(unsigned loop);  // loop past the last: from a worker
    void count_handler_cancelled(unsigned loop);  // on the loop: its client went away first
    // Server-Sent Events (rivet::EventStream), from any thread (locked adds: they are rare
    // next to requests, and an event's count is added once per batch the connection takes).
    void count_event_stream_opened(unsigned loop);
    void count_event_stream_closed(unsigned loop, bool slow);  // slow: past its hard bound
    void count_events_sent(unsigned loop, uint64_t events);
    // Topics shared through Redis (app/websocket/topic_relay.hpp), on loop `loop`'s thread.
    enum class PubSub : uint8_t {
        Unshared,    // published here while Redis could not take it: delivered here only
        Received,    // published by another instance, delivered here
        Reconnects,  // the subscription made again after Redis went away
    };
    void count_pubsub(unsigned loop, PubSub what);

    using ClassCounts = std::array<uint64_t, kClasses>;
    struct Histogram {
        std::array<uint64_t, kBuckets> counts{};  // per bucket (not cumulative)
        uint64_t sum_us = 0;
    };
    // Where a histogram of [route][method][class] is in Totals::durations.
    static size_t series_of(uint32_t route, Method method, size_t status_class) {
        return (size_t(route) * kMethods + size_t(method)) * kClasses + status_class;
    }
    static const char* class_name(size_t status_class);  // "1xx" .. "5xx"
    struct Totals {
        std::vector<std::array<ClassCounts, kProtocols>> by_route;  // [route][protocol][class]
        std::vector<Histogram> durations;          // [route][method][class], by series_of
        std::array<uint64_t, kBuckets> latency{};  // all of them: per bucket (not cumulative)
        uint64_t latency_sum_us = 0;
        uint64_t requests = 0;
        uint64_t rate_limited = 0;
        uint64_t rate_limit_fallbacks = 0;
        uint64_t pool_rejected = 0;
        uint64_t handler_exceptions = 0;  // handlers that threw (answered 500)
        uint64_t handlers_cancelled = 0;  // waiting handlers whose client went away
        uint64_t event_streams_opened = 0;
        uint64_t event_streams_closed = 0;
        uint64_t event_streams_slow = 0;  // closed because the client read too slowly
        uint64_t events_sent = 0;
        uint64_t pubsub_unshared = 0;
        uint64_t pubsub_received = 0;
        uint64_t pubsub_reconnects = 0;
    };
    Totals totals() const;
    const std::vector<RouteLabel>& routes() const { return routes_; }

private:
    // A histogram's place in a block: its buckets, then its sum (µs).
    static constexpr size_t kHistogramSlots = kBuckets + 1;
    // Counters read and written through std::atomic_ref, in one calloc'd block.
    struct ZeroedCounters {
        explicit ZeroedCounters(size_t count);
        uint64_t& operator[](size_t i) const { return slots.get()[i]; }
        struct Free {
            void operator()(uint64_t* p) const;
        };
        std::unique_ptr<uint64_t, Free> slots;
    };
    struct alignas(64) Block {
        explicit Block(size_t routes)
            : by_route(routes * kProtocols * kClasses),
              durations(routes * kMethods * kClasses * kHistogramSlots) {}
        ZeroedCounters by_route;   // [route][protocol][class]
        ZeroedCounters durations;  // [series_of][bucket, then the sum]
        std::atomic<uint64_t> rate_limited{0};
        std::atomic<uint64_t> rate_limit_fallbacks{0};
        std::atomic<uint64_t> pool_rejected{0};
        std::atomic<uint64_t> handler_exceptions{0};
        std::atomic<uint64_t> handlers_cancelled{0};
        std::atomic<uint64_t> event_streams_opened{0};
        std::atomic<uint64_t> event_streams_closed{0};
        std::atomic<uint64_t> event_streams_slow{0};
        std::atomic<uint64_t> events_sent{0};
        std::atomic<uint64_t> pubsub_unshared{0};
        std::atomic<uint64_t> pubsub_received{0};
        std::atomic<uint64_t> pubsub_reconnects{0};
    };
    static size_t bucket_of(uint64_t micros);
    static size_t class_of(int status);
    // A request's series, or none (a route id past the table: counted nowhere).
    uint64_t* histogram_of(Block& b, uint32_t route, Method method, int status) {
        if (route >= routes_.size()) return nullptr;
        size_t m = size_t(method) < kMethods ? size_t(method) : size_t(Method::Other);
        return &b.durations[series_of(route, Method(m), class_of(status)) * kHistogramSlots];
    }
    static size_t counter_of(uint32_t route, Protocol protocol, int status) {
        return (size_t(route) * kProtocols + protocol) * kClasses + class_of(status);
    }

    std::vector<RouteLabel> routes_;
    std::vector<std::unique_ptr<Block>> blocks_;  // one per loop, then the shared one
};

}  // namespace rivet::app
