// Loop: one thread's event loop: epoll readiness, timers and a wake-up inbox for work posted from
// other threads (the worker pool's finished responses, shutdown).
//
// Level-triggered on purpose: a connection is registered once for reading and never touched again
// unless a write comes up short (then writability is asked for until the output drains). That is
// one epoll_wait, one read and one write per request, and no epoll_ctl on the request path.
#pragma once

#include <cstdint>
#include <functional>
#include <mutex>
#include <vector>

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

    TimerWheel& timers() { return timers_; }
    uint64_t now_ms() const { return now_ms_; }       // the monotonic clock, read once per turn
    int64_t wall_seconds() const { return wall_s_; }  // wall clock (Unix seconds), once per turn

    // Called at the end of every turn on the loop's thread (e.g. flush pending output).
    void on_turn_end(std::function<void()> hook) { turn_end_hooks_.push_back(std::move(hook)); }

private:
    void drain_inbox();
    void read_clocks();

    int epfd_ = -1;
    int wakefd_ = -1;
    bool running_ = false;
    uint64_t now_ms_ = 0;
    int64_t wall_s_ = 0;
    TimerWheel timers_;
    std::vector<std::function<void()>> turn_end_hooks_;

    std::mutex inbox_mutex_;
    std::vector<Task> inbox_;
    std::vector<Task> draining_;  // swapped with inbox_ so tasks run outside the lock
    bool wake_pending_ = false;   // under inbox_mutex_
};

}  // namespace rivet::net
