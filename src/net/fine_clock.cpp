#include "net/fine_clock.hpp"

#include <fstream>
#include <string>

namespace rivet::net {

namespace {

// An anchor whose two TSC reads lie further apart than this was likely preempted between them
// (a clock_gettime takes ~70 ticks; a preemption, thousands): its pairing is not trusted.
[[maybe_unused]] constexpr uint64_t kMaxAnchorGapTicks = 4000;
// The rate is first measured over this much of the clock, then again over each kRateWindowNs.
[[maybe_unused]] constexpr uint64_t kFirstRateWindowNs = 20'000'000;
[[maybe_unused]] constexpr uint64_t kRateWindowNs = 1'000'000'000;
// How far an anchor may lie from the count since the anchor before it: the two pairings' error
// (half of kMaxAnchorGapTicks each, 2 µs at a 1 GHz TSC) and 0.1% of the time between them (the
// rate's error, NTP's slewing).
[[maybe_unused]] constexpr uint64_t kAgreementNs = 5'000;
[[maybe_unused]] constexpr uint64_t kAgreementPerMille = 1;

}  // namespace

FineClock::Source FineClock::best_source() {
#if RIVET_FINE_CLOCK_TSC
    // The kernel picks "tsc" only when it finds the TSC constant-rate and in step across cores.
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
#if RIVET_FINE_CLOCK_TSC
    if (source_ == Source::Tsc) {
        const uint64_t before = __rdtsc();
        const uint64_t ns = core::monotonic_ns();
        const uint64_t after = __rdtsc();
        return anchor_with(ns, before, after);
    }
#endif
    return no_earlier(core::monotonic_ns());
}

#if RIVET_FINE_CLOCK_TSC

uint64_t FineClock::anchor_with(uint64_t ns, uint64_t tsc_before, uint64_t tsc_after) {
    const bool paired = tsc_after >= tsc_before && tsc_after - tsc_before <= kMaxAnchorGapTicks;
    if (!paired) {
        anchored_ = false;
        return no_earlier(ns);
    }
    const uint64_t tsc = tsc_before + (tsc_after - tsc_before) / 2;
    if (ns_per_tick_q32_ != 0 && !count_agrees(ns, tsc)) {
        ns_per_tick_q32_ = 0;  // the TSC and the clock parted: measure again from here
        base_ns_ = 0;
    }
    measure_rate(ns, tsc);
    anchor_ns_ = ns;
    anchor_tsc_ = tsc;
    anchored_ = ns_per_tick_q32_ != 0;
    return no_earlier(ns);
}

bool FineClock::count_agrees(uint64_t ns, uint64_t tsc) const {
    if (anchor_ns_ == 0) return true;  // nothing to compare with
    if (tsc < anchor_tsc_ || ns < anchor_ns_) return false;
    const auto counted =
        (static_cast<unsigned __int128>(tsc - anchor_tsc_) * ns_per_tick_q32_) >> 32;
    const uint64_t elapsed = ns - anchor_ns_;
    const uint64_t allowed = kAgreementNs + elapsed / 1000 * kAgreementPerMille;
    return counted <= elapsed ? elapsed - counted <= allowed : counted - elapsed <= allowed;
}

void FineClock::measure_rate(uint64_t ns, uint64_t tsc) {
    if (base_ns_ == 0 || tsc <= base_tsc_ || ns <= base_ns_) {
        base_ns_ = ns;
        base_tsc_ = tsc;
        return;
    }
    const uint64_t span = ns - base_ns_;
    if (span < (ns_per_tick_q32_ == 0 ? kFirstRateWindowNs : kRateWindowNs)) return;
    const auto q32 = (static_cast<unsigned __int128>(span) << 32) / (tsc - base_tsc_);
    // A rate outside 10 MHz .. 100 GHz is no TSC's: read clock_gettime, and measure again.
    const bool plausible = q32 >= (uint64_t(1) << 32) / 100 && q32 <= (uint64_t(100) << 32);
    ns_per_tick_q32_ = plausible ? static_cast<uint64_t>(q32) : 0;
    base_ns_ = ns;
    base_tsc_ = tsc;
}

#endif

}  // namespace rivet::net
