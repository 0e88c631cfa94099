// RateLimiter: a token bucket per client address (refilled at `rate` per second, holding at
// most `burst`), in a table of fixed size so that a flood of distinct addresses cannot grow
// memory: max_clients buckets of 32 bytes, allocated once, as one zeroed block (calloc): a
// block this size comes from mmap, whose pages cost no memory until a bucket on them is used,
// so a server that limits nobody, or a few clients, does not pay for the whole table (3.2 MB at
// the default 100,000: most of the start-up RSS when it was allocated and cleared).
//
// The table is split into shards by a hash of the address, each behind its own lock, so loops
// serving different clients rarely meet on one. A client's bucket lives in a short probe window
// of its shard; a newcomer takes an empty slot there, else one whose bucket has refilled
// completely (an idle client loses nothing by being forgotten), else the least recently used
// one (under a flood larger than the table, that client starts again from a full bucket).
#pragma once

#include <atomic>
#include <cstddef>
#include <cstdint>
#include <memory>
#include <mutex>
#include <vector>

#include "app/operations/ip_address.hpp"

namespace rivet::app {

class RateLimiter {
public:
    static constexpr unsigned kShards = 64;
    static constexpr unsigned kWindow = 8;  // slots probed per lookup

    explicit RateLimiter(size_t max_clients);

    struct Verdict {
        bool allowed;
        unsigned retry_after_s;  // when refused: whole seconds until one token is back (>= 1)
    };
    // Takes a token from `client`'s bucket, if it has one. `now_ns` is a monotonic clock.
    Verdict check(const IpAddress& client, uint64_t now_ns, double rate, double burst);

    // A new size forgets every bucket (rare: a reload that changes max_clients).
    void resize(size_t max_clients);
    size_t capacity() const { return per_shard_ * kShards; }
    size_t tracked() const;  // buckets in use (a scan: for metrics, not the request path)

private:
    struct Bucket {
        IpAddress key;
        double tokens = 0;
        uint64_t last_ns = 0;  // 0: the slot is free
    };
    struct alignas(64) Shard {
        mutable std::mutex mutex;
        Bucket* slots = nullptr;  // in table_
        size_t size = 0;          // with the slots, under the lock: a resize may race a lookup
    };
    struct Free {
        void operator()(Bucket* b) const;
    };
    uint64_t hash(const IpAddress& ip) const;

    std::atomic<size_t> per_shard_{0};
    uint64_t seed_;
    std::unique_ptr<Bucket, Free> table_;  // every shard's slots, back to back
    Shard shards_[kShards];
};

}  // namespace rivet::app
