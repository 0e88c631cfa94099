// SendPace: how a client with answers waiting is held to taking them (Limits::min_send_rate over
// windows of Timeouts::write_ms; at least one byte a window whatever the rate). What the client
// took is what TCP saw acknowledged (Transport::bytes_taken_by_peer), not what we wrote: the
// kernel's send buffer (up to 4 MiB) takes our writes in bursts whenever it empties by half, so a
// steady reader can go a long while without one write of ours moving. Used by both HTTP/1.1 and
// HTTP/2 sessions; a client judged too slow is reset (net::reset_on_close): what its socket still
// holds would reach it as slowly.
#pragma once

#include <cstdint>

#include "engine/pace.hpp"
#include "engine/transport.hpp"

namespace rivet::engine {

class SendPace {
public:
    enum class Verdict : uint8_t { Keep, TooSlow };

    // Answers wait for the client: a window starts now unless one runs.
    void waiting(uint64_t now_ms, const Transport& transport) {
        if (pace_.running()) return;
        pace_.start(now_ms);
        taken_mark_ = transport.bytes_taken_by_peer().value_or(0);
    }
    // Nothing waits: the next answer the client waits for gets a fresh window.
    void idle() { pace_.stop(); }
    uint64_t window_end_ms(uint64_t write_ms) const { return pace_.window_end_ms(1, write_ms); }

    // At or past window_end_ms(): whether the client took enough over the window (the next
    // then starts now).
    Verdict judge(uint64_t now_ms, const Transport& transport, uint64_t rate, uint64_t write_ms) {
        const auto taken = transport.bytes_taken_by_peer();
        // A socket that cannot tell: our own writes are the progress.
        if (!taken)
            return now_ms < transport.write_progress_ms + write_ms ? Verdict::Keep
                                                                   : Verdict::TooSlow;
        const uint64_t moved = *taken - taken_mark_;
        taken_mark_ = *taken;
        pace_.add(moved);
        if (moved == 0 || !pace_.judge(now_ms, rate, write_ms)) return Verdict::TooSlow;
        pace_.start(now_ms);  // the next window (Pace::judge starts none without a rate)
        return Verdict::Keep;
    }

private:
    Pace pace_;
    uint64_t taken_mark_ = 0;  // what the client had taken when the window began
};

}  // namespace rivet::engine
