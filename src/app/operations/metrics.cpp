#include "app/operations/metrics.hpp"

#include <algorithm>
#include <cstdlib>
#include <new>

namespace rivet::app {

namespace {

// The single writer's increment: no lock prefix, and readers still see whole values.
inline void bump(std::atomic<uint64_t>& c, uint64_t n = 1) {
    c.store(c.load(std::memory_order_relaxed) + n, std::memory_order_relaxed);
}

inline void add(std::atomic<uint64_t>& c, uint64_t n = 1) {
    c.fetch_add(n, std::memory_order_relaxed);
}

// The same for a ZeroedCounters slot.
inline void bump(uint64_t& slot, uint64_t n = 1) {
    std::atomic_ref<uint64_t> c(slot);
    c.store(c.load(std::memory_order_relaxed) + n, std::memory_order_relaxed);
}

inline void add(uint64_t& slot, uint64_t n = 1) {
    std::atomic_ref<uint64_t>(slot).fetch_add(n, std::memory_order_relaxed);
}

inline uint64_t load(uint64_t& slot) {
    return std::atomic_ref<uint64_t>(slot).load(std::memory_order_relaxed);
}

}  // namespace

Metrics::ZeroedCounters::ZeroedCounters(size_t count)
    : slots(static_cast<uint64_t*>(std::calloc(std::max<size_t>(count, 1), sizeof(uint64_t)))) {
    if (!slots) throw std::bad_alloc();
}

void Metrics::ZeroedCounters::Free::operator()(uint64_t* p) const {
    std::free(p);
}

Metrics::Metrics(unsigned loops, std::vector<RouteLabel> routes) : routes_(std::move(routes)) {
    for (unsigned i = 0; i <= loops; ++i)
        blocks_.push_back(std::make_unique<Block>(routes_.size()));
}

size_t Metrics::bucket_of(uint64_t micros) {
    size_t i = 0;
    while (i < std::size(kBoundsUs) && micros > kBoundsUs[i]) ++i;
    return i;
}

const char* Metrics::class_name(size_t status_class) {
    static const char* const names[kClasses] = {"1xx", "2xx", "3xx", "4xx", "5xx"};
    return names[status_class < kClasses ? status_class : kClasses - 1];
}

size_t Metrics::class_of(int status) {
    int c = status / 100 - 1;
    return c < 0 ? 0 : c > 4 ? 4 : size_t(c);
}

void Metrics::record(unsigned loop, uint32_t route, Protocol protocol, Method method, int status,
                     uint64_t micros) {
    if (loop + 1 >= blocks_.size()) return record_shared(route, protocol, method, status, micros);
    Block& b = *blocks_[loop];
    if (uint64_t* h = histogram_of(b, route, method, status)) {
        bump(b.by_route[counter_of(route, protocol, status)]);
        bump(h[bucket_of(micros)]);
        bump(h[kBuckets], micros);
    }
}

void Metrics::count_rate_limited(unsigned loop) {
    if (loop + 1 >= blocks_.size()) return add(blocks_.back()->rate_limited);
    bump(blocks_[loop]->rate_limited);
}

void Metrics::count_rate_limit_fallback(unsigned loop) {
    if (loop + 1 >= blocks_.size()) return add(blocks_.back()->rate_limit_fallbacks);
    bump(blocks_[loop]->rate_limit_fallbacks);
}

void Metrics::count_pubsub(unsigned loop, PubSub what) {
    Block& b = *blocks_[std::min<size_t>(loop, blocks_.size() - 1)];
    auto& counter = what == PubSub::Unshared   ? b.pubsub_unshared
                    : what == PubSub::Received ? b.pubsub_received
                                               : b.pubsub_reconnects;
    add(counter);  // rare next to requests: a locked add, whichever block
}

void Metrics::record_shared(uint32_t route, Protocol protocol, Method method, int status,
                            uint64_t micros) {
    Block& b = *blocks_.back();
    if (uint64_t* h = histogram_of(b, route, method, status)) {
        add(b.by_route[counter_of(route, protocol, status)]);
        add(h[bucket_of(micros)]);
        add(h[kBuckets], micros);
    }
}

void Metrics::count_pool_rejected() {
    add(blocks_.back()->pool_rejected);
}

void Metrics::count_handler_exception(unsigned loop) {
    if (loop >= blocks_.size() - 1) return add(blocks_.back()->handler_exceptions);  // a worker
    bump(blocks_[loop]->handler_exceptions);
}

void Metrics::count_handler_cancelled(unsigned loop) {
    if (loop >= blocks_.size() - 1) return add(blocks_.back()->handlers_cancelled);
    bump(blocks_[loop]->handlers_cancelled);
}

void Metrics::count_event_stream_opened(unsigned loop) {
    add(blocks_[std::min<size_t>(loop, blocks_.size() - 1)]->event_streams_opened);
}

void Metrics::count_event_stream_closed(unsigned loop, bool slow) {
    Block& b = *blocks_[std::min<size_t>(loop, blocks_.size() - 1)];
    add(b.event_streams_closed);
    if (slow) add(b.event_streams_slow);
}

void Metrics::count_events_sent(unsigned loop, uint64_t events) {
    add(blocks_[std::min<size_t>(loop, blocks_.size() - 1)]->events_sent, events);
}

Metrics::Totals Metrics::totals() const {
    Totals t;
    t.by_route.assign(routes_.size(), {});
    t.durations.assign(routes_.size() * kMethods * kClasses, {});
    for (const auto& b : blocks_) {
        size_t counter = 0;
        for (auto& route : t.by_route)
            for (auto& protocol : route)
                for (uint64_t& n : protocol) n += load(b->by_route[counter++]);
        size_t slot = 0;
        for (Histogram& h : t.durations) {
            for (uint64_t& n : h.counts) n += load(b->durations[slot++]);
            h.sum_us += load(b->durations[slot++]);
        }
        t.rate_limited += b->rate_limited.load(std::memory_order_relaxed);
        t.rate_limit_fallbacks += b->rate_limit_fallbacks.load(std::memory_order_relaxed);
        t.pool_rejected += b->pool_rejected.load(std::memory_order_relaxed);
        t.handler_exceptions += b->handler_exceptions.load(std::memory_order_relaxed);
        t.handlers_cancelled += b->handlers_cancelled.load(std::memory_order_relaxed);
        t.event_streams_opened += b->event_streams_opened.load(std::memory_order_relaxed);
        t.event_streams_closed += b->event_streams_closed.load(std::memory_order_relaxed);
        t.event_streams_slow += b->event_streams_slow.load(std::memory_order_relaxed);
        t.events_sent += b->events_sent.load(std::memory_order_relaxed);
        t.pubsub_unshared += b->pubsub_unshared.load(std::memory_order_relaxed);
        t.pubsub_received += b->pubsub_received.load(std::memory_order_relaxed);
        t.pubsub_reconnects += b->pubsub_reconnects.load(std::memory_order_relaxed);
    }
    for (const Histogram& h : t.durations) {
        for (size_t i = 0; i < kBuckets; ++i) {
            t.latency[i] += h.counts[i];
            t.requests += h.counts[i];
        }
        t.latency_sum_us += h.sum_us;
    }
    return t;
}

}  // namespace rivet::app
