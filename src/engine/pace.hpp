// Pace: a minimum rate over windows, for the bytes of a request body the server reads
// (Limits::min_body_rate, windows of the body timeout) and of the answers a client takes
// (Limits::min_send_rate, windows of the write timeout). Each window runs from the end of the
// last: one that moved fewer than rate × window bytes ends the connection (a body gets 408). The
// first window is the grace a client gets to reach its pace; a short stall inside a window is
// made up by the rest of it. Time the server does not want the bytes (a streamed body's handler
// that does not ask) is left out: pause() and resume() move the window by it.
#pragma once

#include <cstdint>

namespace rivet::engine {

class Pace {
public:
    // Starts judging (again) from `now`.
    void start(uint64_t now_ms) {
        window_start_ms_ = now_ms ? now_ms : 1;  // 0 means stopped
        paused_since_ms_ = 0;
        bytes_ = 0;
    }
    // Not judging: nothing is owed (sending) until start() again.
    void stop() { window_start_ms_ = 0; }
    bool running() const { return window_start_ms_ != 0; }
    void add(uint64_t bytes) { bytes_ += bytes; }
    void pause(uint64_t now_ms) {
        if (paused_since_ms_ == 0) paused_since_ms_ = now_ms ? now_ms : 1;
    }
    void resume(uint64_t now_ms) {
        if (paused_since_ms_ == 0) return;
        window_start_ms_ += now_ms - paused_since_ms_;
        paused_since_ms_ = 0;
    }
    // When the current window ends (rate 0: never).
    uint64_t window_end_ms(uint64_t rate, uint64_t window_ms) const {
        return rate == 0 ? UINT64_MAX : window_start_ms_ + window_ms;
    }
    // At or past window_end_ms(): false when the window brought too little; else the next
    // window starts now.
    bool judge(uint64_t now_ms, uint64_t rate, uint64_t window_ms) {
        if (rate == 0 || now_ms < window_end_ms(rate, window_ms)) return true;
        if (bytes_ * 1000 < rate * window_ms) return false;
        start(now_ms);
        return true;
    }

private:
    uint64_t window_start_ms_ = 0;
    uint64_t paused_since_ms_ = 0;  // 0: not paused
    uint64_t bytes_ = 0;            // read in this window
};

}  // namespace rivet::engine
