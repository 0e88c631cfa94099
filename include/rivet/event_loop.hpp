// rivet::EventLoop: one of the server's I/O loops, for code that must run on it later: a
// callback from another thread, a timer, an asynchronous client's completion.
//
//   rivet::EventLoop* loop = rivet::EventLoop::current();   // inside a handler: its loop
//   std::thread([loop] { ...; loop->post([] { /* back on the loop */ }); }).detach();
//   auto t = loop->call_after(250ms, [] { ... });            // t.cancel() to disarm
//   app.loop(0).post(...);                                    // from outside, while running
//
// Functions posted or timed run on the loop's thread, one at a time, between requests: they
// must not block. A loop stops when the app stops; what is still queued then never runs.
#pragma once

#include <chrono>
#include <cstdint>
#include <functional>

namespace rivet {

class EventLoop;

// A call_after() timer. Copies name the same timer.
class TimerHandle {
public:
    TimerHandle() = default;
    // Disarms it if it has not fired; harmless otherwise. From any thread (off the loop it is
    // posted there, so a timer already due may still fire).
    void cancel() const;
    explicit operator bool() const { return loop_ != nullptr; }

private:
    friend class EventLoop;
    TimerHandle(const EventLoop* loop, uint64_t id) : loop_(loop), id_(id) {}
    const EventLoop* loop_ = nullptr;
    uint64_t id_ = 0;
};

namespace detail {
struct LoopAccess;
}

class EventLoop {
public:
    using Function = std::function<void()>;

    // Runs `fn` on this loop's thread soon. From any thread.
    void post(Function fn) const;
    // Runs `fn` on this loop's thread once `delay` has passed (millisecond ticks on a coarse
    // clock: within a few ms). From any thread.
    TimerHandle call_after(std::chrono::milliseconds delay, Function fn) const;

    unsigned index() const { return index_; }  // 0 .. threads-1, as Request::loop_index()
    bool on_this_thread() const;

    // The loop running the calling code (a handler, a posted function, a timer), or nullptr on
    // any other thread (a worker, main).
    static EventLoop* current();

    EventLoop(const EventLoop&) = delete;
    EventLoop& operator=(const EventLoop&) = delete;
    ~EventLoop() = default;

private:
    friend class TimerHandle;
    friend struct detail::LoopAccess;
    EventLoop(void* impl, unsigned index) : impl_(impl), index_(index) {}
    void* impl_;  // the framework's per-loop services
    unsigned index_;
};

}  // namespace rivet
