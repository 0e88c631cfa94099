// The clock behind every timeout and cache TTL: monotonic, in milliseconds, coarse. COARSE is a
// vDSO read with no system call; timeouts and TTLs need no better than ~10 ms.
#pragma once

#include <time.h>

#include <cstdint>

namespace rivet::core {

inline uint64_t monotonic_ms() {
    timespec t;
    clock_gettime(CLOCK_MONOTONIC_COARSE, &t);
    return uint64_t(t.tv_sec) * 1000 + uint64_t(t.tv_nsec) / 1'000'000;
}

}  // namespace rivet::core
