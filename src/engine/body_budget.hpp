// BodyBudget: the bytes all loops of one server may hold for buffered request bodies, and for
// answers their clients have not taken yet.
//
// A buffered body that does not arrive with its head reserves what it may grow to (its
// Content-Length, or its limit when chunked) before it is read; over the budget its connection
// stops reading (Connection::Phase::BodyWait) until bytes are given back, or until the body
// timeout runs out: then it is refused with 503 and Retry-After (kBudgetRetryAfterS), so that
// slow bodies holding the budget cannot hold every other upload for ever. A reservation is all
// or nothing and an admitted body never waits again, so admitted bodies always finish (or are
// cut by the body timeout and minimum rate, Pace); and a body alone (nothing held at all) is
// always admitted, so one body whose limit exceeds the budget still goes. Loops with waiting bodies
// are woken by give_back().
//
// Unsent output is charged as it is held (charge_output): an answer made cannot be refused, so
// it may take the budget past its limit, but while clients that do not read hold it no new body
// is admitted (an echo of 8 MiB to a client that never reads holds its 8 MiB as its request
// did). The minimum send rate (Pace) ends such clients, and their output is given back.
#pragma once

#include <atomic>
#include <cstdint>
#include <functional>
#include <memory>
#include <vector>

namespace rivet::engine {

// The Retry-After of that 503, in seconds.
inline constexpr unsigned kBudgetRetryAfterS = 1;

class BodyBudget {
public:
    explicit BodyBudget(uint64_t limit) : limit_(limit) {}

    void set_limit(uint64_t limit) { limit_.store(limit, std::memory_order_relaxed); }
    // Reserves `n` bytes when they fit under the limit, or when nothing is held at all.
    bool try_take(uint64_t n);
    void give_back(uint64_t n);  // from any loop; wakes the loops that wait
    // A connection's unsent output changed from `was` to `now` bytes (always taken).
    void charge_output(uint64_t was, uint64_t now);

    uint64_t held() const { return held_.load(std::memory_order_relaxed); }
    uint64_t peak() const { return peak_.load(std::memory_order_relaxed); }
    uint64_t output_held() const { return output_held_.load(std::memory_order_relaxed); }

    // A loop says how to wake it (before the loops run), and withdraws before it is destroyed.
    void add_waker(unsigned loop, std::function<void()> wake);
    void remove_waker(unsigned loop);
    // The loop has waiting bodies: the next give_back() wakes it (once).
    void want(unsigned loop);

private:
    struct Waker {
        std::atomic<bool> wanted{false};
        std::function<void()> wake;
    };
    std::atomic<uint64_t> limit_;
    std::atomic<uint64_t> held_{0};
    std::atomic<uint64_t> peak_{0};
    std::atomic<uint64_t> output_held_{0};        // the part of held_ that is unsent output
    std::vector<std::unique_ptr<Waker>> wakers_;  // by loop index; fixed while loops run
};

}  // namespace rivet::engine
