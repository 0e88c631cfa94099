#include "net/fine_clock.hpp"

#include <fstream>
#include <string>

namespace rivet::net {

namespace {

// An anchor whose two TSC reads lie further apart than this was likely preempted between them
// (a clock_gettime takes ~70 ticks; a preemption, thousands): its pairing is not trusted.
constexpr uint64_t kMaxAnchorGapTicks = 4000;
// The rate is measured once the anchors span this much, and again at the longer span.
constexpr uint64_t kFirstRateSpanNs = 20'000'000;
constexpr uint64_t kFinalRateSpanNs = 1'000'000'000;

}  // namespace

FineClock::Source FineClock::best_source() {
#if defined(__x86_64__)
    // The kernel picks "tsc" only when it finds the TSC constant-rate and in step across cores,
    // and drops it if it stops being so: its choice is the test.
    static const Source best = [] {
        std::ifstream f("/sys/devices/system/clocksource/clocksource0/current_clocksource");
        std::string name;
        return f >> name && name == "tsc" ? Source::Tsc : Source::ClockGettime;
    }();
    return best;
#else
    return Source::ClockGettime;
#endif
}

uint64_t FineClock::anchor() {
#if defined(__x86_64__)
    if (source_ == Source::Tsc) {
        const uint64_t before = __rdtsc();
        const uint64_t ns = core::monotonic_ns();
        const uint64_t after = __rdtsc();
        const bool paired = after >= before && after - before <= kMaxAnchorGapTicks;
        if (paired) {
            anchor_ns_ = ns;
            anchor_tsc_ = before + (after - before) / 2;
            measure_rate(ns, anchor_tsc_);
        }
        anchored_ = paired && ns_per_tick_q32_ != 0;
        return ns;
    }
#endif
    return core::monotonic_ns();
}

void FineClock::measure_rate(uint64_t ns, uint64_t tsc) {
    if (base_ns_ == 0 || tsc <= base_tsc_ || ns <= base_ns_) {
        if (base_ns_ == 0) base_ns_ = ns, base_tsc_ = tsc;
        return;
    }
    const uint64_t span = ns - base_ns_;
    const uint64_t wanted = measured_over_ns_ == 0 ? kFirstRateSpanNs : kFinalRateSpanNs;
    if (measured_over_ns_ >= kFinalRateSpanNs || span < wanted) return;
    const auto q32 = (static_cast<unsigned __int128>(span) << 32) / (tsc - base_tsc_);
    // A rate outside 10 MHz .. 100 GHz is no TSC's: keep reading clock_gettime.
    if (q32 < (uint64_t(1) << 32) / 100 || q32 > (uint64_t(100) << 32)) return;
    ns_per_tick_q32_ = static_cast<uint64_t>(q32);
    measured_over_ns_ = span;
}

}  // namespace rivet::net
