// The loop's fine clock: what each request's duration is read with, once per request. A
// clock_gettime(CLOCK_MONOTONIC) costs ~22 ns here, 4% of a pipelined /hello's CPU; where the
// kernel itself keeps time with the TSC (x86-64, clocksource "tsc": constant rate, in step across
// cores), a reading is instead one rdtsc (~9 ns) counted from the turn's clock_gettime.
//
// Each turn re-anchors the count to clock_gettime, so a reading is off by at most the rate's
// error times the time since the turn began. The rate is measured from the anchors themselves,
// over the first 20 ms and then over each following second, so it follows the clock's current
// rate (NTP's slewing included). Before it is trusted again, every anchor is checked against
// the count from the one before: where they part (a suspend, a migrated VM, a kernel that gave
// up on the TSC), counting stops and the rate is measured afresh. An anchor that a preemption
// may have split (its two TSC reads far apart) is not used: that turn reads clock_gettime, as
// does a clock whose rate is not measured yet, and every machine without a usable TSC.
// Readings never go back, so a duration is never negative.
#pragma once

#include <cstdint>

#include "core/clock.hpp"

#if defined(__x86_64__)
#include <x86intrin.h>
#define RIVET_FINE_CLOCK_TSC 1
#endif

namespace rivet::net {

class FineClock {
public:
    enum class Source : uint8_t {
        Tsc,           // rdtsc, once the rate is measured (falls back as above)
        ClockGettime,  // always clock_gettime
    };

    // Tsc where this machine's kernel keeps time with the TSC, else ClockGettime; asked once
    // per process (the check of each anchor catches a later change).
    static Source best_source();

    explicit FineClock(Source source = best_source()) : source_(source) {}

    // At the start of a turn: reads clock_gettime, and the TSC around it. Returns the clock.
    uint64_t anchor();

    // The monotonic clock now, in nanoseconds (core::monotonic_ns's scale). It may differ from a
    // clock_gettime read beside it by the rate's error.
    uint64_t read() {
#if RIVET_FINE_CLOCK_TSC
        if (anchored_) return read_at(__rdtsc());
#endif
        return no_earlier(core::monotonic_ns());
    }

    // The latest value anchor() or read() gave: readings never go below it.
    uint64_t last() const {
        return last_;
    }

    // Whether read() counts the TSC this turn.
    bool counting_tsc() const {
        return anchored_;
    }

#if RIVET_FINE_CLOCK_TSC
    // anchor() and read() on given readings: what they run, and what the tests drive.
    uint64_t anchor_with(uint64_t ns, uint64_t tsc_before, uint64_t tsc_after);
    uint64_t read_at(uint64_t tsc) {
        const uint64_t ticks = tsc > anchor_tsc_ ? tsc - anchor_tsc_ : 0;
        const auto ns = (static_cast<unsigned __int128>(ticks) * ns_per_tick_q32_) >> 32;
        return no_earlier(anchor_ns_ + static_cast<uint64_t>(ns));
    }
#endif

private:
    uint64_t no_earlier(uint64_t ns) {
        return last_ = ns > last_ ? ns : last_;
    }
#if RIVET_FINE_CLOCK_TSC
    bool count_agrees(uint64_t ns, uint64_t tsc) const;
    void measure_rate(uint64_t ns, uint64_t tsc);
#endif

    Source source_;
    bool anchored_ = false;                    // read() counts the TSC from this turn's anchor
    uint64_t last_ = 0;                        // the latest value given out
    uint64_t anchor_ns_ = 0, anchor_tsc_ = 0;  // the last paired anchor; ns 0: none yet
    uint64_t ns_per_tick_q32_ = 0;         // nanoseconds per tick, 32.32 fixed point; 0: unknown
    uint64_t base_ns_ = 0, base_tsc_ = 0;  // where the rate is being measured from; ns 0: nowhere
};

}  // namespace rivet::net
