// Loop: one thread's event loop: epoll readiness, timers and a wake-up inbox for work posted from
// other threads (the worker pool's finished responses, shutdown).
//
// Services for the layers above (coroutine handlers, user code): post() from any thread,
// one-shot callback timers with millisecond resolution (call_after/cancel_timer, from any
// thread), readiness watches on any descriptor (watch/unwatch, on the loop's thread), and
// current(), the loop running on the calling thread.
//
// Level-triggered on purpose: a connection is registered once for reading and never touched again
// unless a write comes up short (then writability is asked for until the output drains). That is
// one epoll_wait, one read and one write per request, and no epoll_ctl on the request path.
#pragma once

#include <atomic>
#include <cstdint>
#include <functional>
#include <memory>
#include <mutex>
#include <unordered_map>
#include <vector>

#include "core/clock.hpp"
#include "net/fine_clock.hpp"
#include "net/timer_wheel.hpp"

namespace rivet::net {

// kHangup: the socket is dead both ways (EPOLLHUP/EPOLLERR); it is always reported.
enum IoEvents : uint32_t { kReadable = 1, kWritable = 2, kHangup = 4 };

class IoHandler {
public:
    virtual void on_io(uint32_t events) = 0;  // a mask of IoEvents

protected:
    ~IoHandler() = default;
};

class Loop {
public:
    using Task = std::function<void()>;

    Loop();
    ~Loop();
    Loop(const Loop&) = delete;
    Loop& operator=(const Loop&) = delete;

    // Registration; `interest` is kReadable and/or kWritable. Hang-ups are always reported.
    void add(int fd, uint32_t interest, IoHandler* handler);
    void modify(int fd, uint32_t interest, IoHandler* handler);
    void remove(int fd);

    // Runs until stop(). Each turn: wait, advance timers, dispatch readiness, run posted tasks,
    // then the end-of-turn hooks.
    void run();
    void stop();  // from any thread

    // Queues `task` to run on this loop's thread; from any thread. Wake-ups are coalesced: one
    // eventfd write however many tasks arrive before the loop drains them.
    void post(Task task);
    // Destroys the tasks posted and not run, and any they post as they go. Only once the loop
    // has stopped for good (its destructor does it too).
    void drop_posted();

    // One-shot timer: `fn` runs on this loop's thread `delay_ms` from now: never earlier by any
    // clock, up to a few ms later (1 ms ticks on the coarse monotonic clock, plus its lag). From
    // any thread: off the loop the timer is armed through post(). The id is unique for the loop's
    // lifetime, so cancelling one that already fired is harmless.
    using TimerId = uint64_t;
    TimerId call_after(uint64_t delay_ms, Task fn);
    // Disarms a timer that has not fired. From any thread (off the loop, through post(): a timer
    // due meanwhile may still fire). On the loop: true when it was disarmed before firing.
    bool cancel_timer(TimerId id);

    // Readiness watch on any descriptor (not one registered with add()): `fn(events)` runs on the
    // loop's thread each time `fd` is ready for `interest` (kReadable/kWritable; kHangup is always
    // reported) until unwatch(). One watch per descriptor. Loop thread only; `fn` may unwatch
    // (itself or others).
    using WatchId = uint64_t;
    WatchId watch(int fd, uint32_t interest, std::function<void(uint32_t events)> fn);
    void unwatch(WatchId id);  // harmless for an id already unwatched
    // What a watch waits for from now on (0: hang-ups only). Loop thread only.
    void rewatch(WatchId id, uint32_t interest);

    // The loop whose run() is on the calling thread's stack; nullptr elsewhere.
    static Loop* current();
    bool on_loop_thread() const { return current() == this; }

    // One pointer for the layer above to find its own per-loop object from current().
    void set_user_data(void* p) { user_data_ = p; }
    void* user_data() const { return user_data_; }

    TimerWheel& timers() { return timers_; }
    uint64_t now_ms() const { return now_ms_; }       // the monotonic clock, read once per turn
    int64_t wall_seconds() const { return wall_s_; }  // wall clock (Unix seconds), once per turn
    // The fine monotonic clock (net/fine_clock.hpp, core::monotonic_ns's scale) as last read on
    // this loop: at the start of each turn, and by each read_fine_ns(). What a request's duration
    // starts from: the end of the one before it in a pipelined batch is the start of the next,
    // one reading for both. Never goes back, so a duration read with it is never negative.
    uint64_t fine_ns() const { return fine_clock_.last(); }
    uint64_t read_fine_ns() { return fine_clock_.read(); }

    // Called at the end of every turn on the loop's thread (e.g. flush pending output).
    void on_turn_end(std::function<void()> hook) { turn_end_hooks_.push_back(std::move(hook)); }

private:
    struct CallbackTimer;
    struct FdWatch;

    void drain_inbox();
    void read_clocks();
    int next_timeout_ms() const;
    void arm(TimerId id, uint64_t delay_ms, Task fn);

    int epfd_ = -1;
    int wakefd_ = -1;
    bool running_ = false;
    uint64_t now_ms_ = 0;
    FineClock fine_clock_;
    int64_t wall_s_ = 0;
    TimerWheel timers_;       // the engine's timeouts: coarse (100 ms ticks), re-armed often
    TimerWheel fine_timers_;  // call_after(): 1 ms ticks, so a 50 ms sleep lasts 50 ms
    std::vector<std::function<void()>> turn_end_hooks_;
    void* user_data_ = nullptr;

    std::atomic<uint64_t> next_id_{1};  // timer and watch ids
    std::unordered_map<TimerId, std::unique_ptr<CallbackTimer>> callback_timers_;
    std::unordered_map<WatchId, std::unique_ptr<FdWatch>> watches_;
    // Unwatched this turn: epoll may still hold an event for them, so they are freed at its end.
    std::vector<std::unique_ptr<FdWatch>> retired_watches_;

    std::mutex inbox_mutex_;
    std::vector<Task> inbox_;
    std::vector<Task> draining_;  // swapped with inbox_ so tasks run outside the lock
    bool wake_pending_ = false;   // under inbox_mutex_
};

}  // namespace rivet::net
