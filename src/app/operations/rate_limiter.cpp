#include "app/operations/rate_limiter.hpp"

#include <algorithm>
#include <cmath>
#include <cstdlib>
#include <cstring>
#include <new>
#include <random>
#include <type_traits>

namespace rivet::app {

RateLimiter::RateLimiter(size_t max_clients) : seed_(std::random_device{}() | 1) {
    resize(max_clients);
}

void RateLimiter::Free::operator()(Bucket* b) const {
    std::free(b);
}

void RateLimiter::resize(size_t max_clients) {
    size_t per = std::max<size_t>(kWindow, (max_clients + kShards - 1) / kShards);
    // All zero is every slot free (last_ns 0); calloc leaves the pages untouched (see .hpp).
    static_assert(std::is_trivially_copyable_v<Bucket> && std::is_trivially_destructible_v<Bucket>);
    std::unique_ptr<Bucket, Free> table(
        static_cast<Bucket*>(std::calloc(per * kShards, sizeof(Bucket))));
    if (!table) throw std::bad_alloc();
    for (unsigned i = 0; i < kShards; ++i) {
        std::lock_guard lock(shards_[i].mutex);
        shards_[i].slots = table.get() + i * per;
        shards_[i].size = per;
    }
    // No shard points into the old table now; a lookup holds its shard's lock while it reads.
    table_ = std::move(table);
    per_shard_ = per;
}

uint64_t RateLimiter::hash(const IpAddress& ip) const {
    // A seeded multiply-xorshift of the two halves: cheap, and an outsider cannot aim many
    // addresses at one probe window without knowing the seed.
    uint64_t a, b;
    std::memcpy(&a, ip.bytes, 8);
    std::memcpy(&b, ip.bytes + 8, 8);
    uint64_t h = (a ^ seed_) * 0x9E3779B97F4A7C15ull;
    h ^= h >> 29;
    h = (h ^ b) * 0xBF58476D1CE4E5B9ull;
    return h ^ (h >> 32);
}

RateLimiter::Verdict RateLimiter::check(const IpAddress& client, uint64_t now_ns, double rate,
                                        double burst) {
    if (now_ns == 0) now_ns = 1;  // 0 marks a free slot
    uint64_t h = hash(client);
    Shard& s = shards_[h % kShards];
    std::lock_guard lock(s.mutex);
    size_t per = s.size;
    size_t start = (h / kShards) % per;
    Bucket* found = nullptr;
    Bucket* victim = nullptr;
    int victim_rank = -1;  // 2: free, 1: full again (idle), 0: the oldest one
    for (unsigned i = 0; i < kWindow && i < per; ++i) {
        Bucket& b = s.slots[(start + i) % per];
        if (b.last_ns != 0 && b.key == client) {
            found = &b;
            break;
        }
        int rank = 0;
        if (b.last_ns == 0)
            rank = 2;
        else if (b.tokens + double(now_ns - std::min(now_ns, b.last_ns)) * 1e-9 * rate >= burst)
            rank = 1;
        if (rank > victim_rank || (rank == 0 && victim_rank == 0 && b.last_ns < victim->last_ns)) {
            victim = &b;
            victim_rank = rank;
        }
    }
    if (found) {
        double elapsed = double(now_ns - std::min(now_ns, found->last_ns)) * 1e-9;
        found->tokens = std::min(burst, found->tokens + elapsed * rate);
    } else {
        found = victim;
        found->key = client;
        found->tokens = burst;
    }
    found->last_ns = now_ns;
    if (found->tokens >= 1.0) {
        found->tokens -= 1.0;
        return {true, 0};
    }
    double wait = (1.0 - found->tokens) / rate;
    return {false, unsigned(std::max(1.0, std::ceil(wait)))};
}

size_t RateLimiter::tracked() const {
    size_t n = 0;
    for (const auto& s : shards_) {
        std::lock_guard lock(s.mutex);
        for (size_t i = 0; i < s.size; ++i) n += s.slots[i].last_ns != 0;
    }
    return n;
}

}  // namespace rivet::app
