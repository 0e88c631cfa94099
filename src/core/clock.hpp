// The clock behind every timeout and cache TTL: monotonic, in milliseconds, coarse. COARSE is a
// vDSO read with no system call; timeouts and TTLs need no better than ~10 ms. Durations (a
// request's, for the histograms and the access log) take the fine one, monotonic_ns().
#pragma once

#include <time.h>

#include <cstdint>

namespace rivet::core {

inline uint64_t monotonic_ms() {
    timespec t;
    clock_gettime(CLOCK_MONOTONIC_COARSE, &t);
    return uint64_t(t.tv_sec) * 1000 + uint64_t(t.tv_nsec) / 1'000'000;
}

// The fine monotonic clock (std::chrono::steady_clock's), in nanoseconds.
inline uint64_t monotonic_ns() {
    timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return uint64_t(t.tv_sec) * 1'000'000'000 + uint64_t(t.tv_nsec);
}

// How far monotonic_ms() may trail the fine monotonic clock: the coarse clock's tick (one jiffy,
// 1 to 10 ms by the kernel's HZ) plus the millisecond cut off above. A deadline counted from
// monotonic_ms() adds this to be never early by a fine clock.
inline uint64_t monotonic_ms_lag_bound() {
    static const uint64_t bound = [] {
        timespec res{};
        clock_getres(CLOCK_MONOTONIC_COARSE, &res);
        uint64_t res_ns = uint64_t(res.tv_sec) * 1'000'000'000 + uint64_t(res.tv_nsec);
        return (res_ns + 999'999) / 1'000'000 + 1;
    }();
    return bound;
}

}  // namespace rivet::core
