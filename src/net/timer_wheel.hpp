// TimerWheel: per-loop timeouts (header read, keep-alive idle, write) for thousands of
// connections at O(1) per operation.
//
// Timers are intrusive: the owner (a connection) derives from Timer, so scheduling allocates
// nothing. Re-arming is the hot operation (once per request), so it only records the new deadline;
// a timer that fires early is re-linked into the right slot instead of called ("lazy" re-arm).
// Single-threaded: used only from the owning loop's thread.
#pragma once

#include <cstddef>
#include <cstdint>
#include <vector>

namespace rivet::net {

class TimerWheel;

class Timer {
public:
    Timer() = default;
    Timer(const Timer&) = delete;
    Timer& operator=(const Timer&) = delete;

    bool armed() const { return deadline_ != 0; }
    uint64_t deadline() const { return deadline_; }  // ms on the wheel's clock; 0 = not armed

protected:
    ~Timer() = default;  // owners must cancel before destruction (TimerWheel::cancel)
    virtual void on_timeout() = 0;

private:
    friend class TimerWheel;
    Timer* prev_ = nullptr;
    Timer* next_ = nullptr;
    uint64_t deadline_ = 0;
    // Tick of the slot the timer sits in; 0 = not linked. Can be earlier than the deadline's tick
    // (lazy re-arm), never later than the first tick that can honour it.
    uint64_t tick_ = 0;
};

class TimerWheel {
public:
    // `tick_ms`: resolution (timeouts fire up to one tick late); `slots`: wheel size (a power of
    // two); deadlines further than slots*tick_ms away simply go round the wheel more than once.
    explicit TimerWheel(uint64_t now_ms, uint64_t tick_ms = 100, size_t slots = 512);
    ~TimerWheel();

    // Arms (or re-arms) `t` to fire at now + delay_ms. Cheap enough to call on every request.
    void schedule(Timer& t, uint64_t delay_ms);
    void cancel(Timer& t);

    // Moves the clock to `now_ms` and calls on_timeout() of every timer whose deadline has passed.
    // A callback may schedule, cancel or destroy (after cancel) any timer, itself included.
    void advance(uint64_t now_ms);

    // Milliseconds until the earliest slot that holds a timer may fire, for epoll_wait; -1 if no
    // timer is armed.
    int next_timeout_ms() const;

    uint64_t now() const { return now_; }
    size_t size() const { return armed_; }  // timers armed

private:
    uint64_t tick_for(uint64_t deadline) const;
    void link(Timer& t, uint64_t tick);
    void unlink(Timer& t);

    std::vector<Timer*> slots_;       // heads of doubly-linked lists
    std::vector<uint64_t> occupied_;  // bit per slot: non-empty, so next_timeout_ms() skips gaps
    Timer* pending_ = nullptr;        // slot list detached by advance(), still being processed
    uint64_t tick_ms_;
    uint64_t mask_;
    uint64_t now_;
    uint64_t current_tick_;  // last tick processed
    size_t armed_ = 0;
};

}  // namespace rivet::net
