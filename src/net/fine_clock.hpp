// The loop's fine clock: what each request's duration is read with, once per request. A
// clock_gettime(CLOCK_MONOTONIC) costs ~22 ns here, 4% of a pipelined /hello's CPU; where the
// kernel itself keeps time with the TSC (x86-64, clocksource "tsc": constant rate, in step across
// cores), a reading is instead one rdtsc (~9 ns) counted from the turn's clock_gettime.
//
// Each turn re-anchors the count to clock_gettime, so a reading is never off by more than the
// rate's error times the time since the turn began (the rate is measured over at least 20 ms,
// then again over at least 1 s). An anchor that a preemption may have split (the TSC moved too
// far across the clock_gettime) is not used: that turn reads clock_gettime, as does a loop
// whose rate is not measured yet, and every machine without a usable TSC.
#pragma once

#include <cstdint>

#include "core/clock.hpp"

#if defined(__x86_64__)
#include <x86intrin.h>
#endif

namespace rivet::net {

class FineClock {
public:
    enum class Source : uint8_t {
        Tsc,           // rdtsc, once the rate is measured (falls back as above)
        ClockGettime,  // always clock_gettime
    };

    // Tsc where this machine's kernel keeps time with the TSC, else ClockGettime: read once per
    // process. Should the kernel drop the TSC later, each turn's anchor still bounds the error.
    static Source best_source();

    explicit FineClock(Source source = best_source()) : source_(source) {}

    // At the start of a turn: reads clock_gettime (returned), and the TSC beside it.
    uint64_t anchor();

    // The monotonic clock now, in nanoseconds (core::monotonic_ns's scale). Not always later
    // than a clock_gettime read just before it: it may differ by the rate's error.
    uint64_t read() const {
#if defined(__x86_64__)
        if (anchored_) {
            const uint64_t tsc = __rdtsc();
            // Another core's TSC may read a few ticks behind the anchor's: never before it.
            const uint64_t ticks = tsc > anchor_tsc_ ? tsc - anchor_tsc_ : 0;
            return anchor_ns_ +
                   uint64_t((static_cast<unsigned __int128>(ticks) * ns_per_tick_q32_) >> 32);
        }
#endif
        return core::monotonic_ns();
    }

    // Whether read() counts the TSC this turn (tests).
    bool counting_tsc() const {
        return anchored_;
    }

private:
    void measure_rate(uint64_t ns, uint64_t tsc);

    Source source_;
    bool anchored_ = false;
    uint64_t anchor_ns_ = 0, anchor_tsc_ = 0;
    uint64_t ns_per_tick_q32_ = 0;  // nanoseconds per tick, 32.32 fixed point; 0: not measured
    uint64_t base_ns_ = 0, base_tsc_ = 0;  // the first good anchor: where the rate is measured from
    uint64_t measured_over_ns_ = 0;        // the span the current rate was measured over
};

}  // namespace rivet::net
