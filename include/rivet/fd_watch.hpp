// rivet::FdWatch: one descriptor watched for as long as the object lives, for code that waits on
// the same descriptor again and again (a database or cache connection).
//
//   rivet::FdWatch watch(fd);                                   // on the loop that waits on it
//   rivet::Interest got = co_await watch.wait(rivet::Interest::Read);   // readable, or hung up
//   if (watch.stirred()) { ... }            // it became ready while nobody waited (peer closed?)
//
// rivet::ready() adds the descriptor to the loop's epoll and removes it at every wait: two
// epoll_ctl per wait. An FdWatch keeps the registration and changes it only when the interest
// changes, or when the descriptor becomes ready while nobody waits (then it stops asking, and
// says so in stirred()): a request/response protocol waits with no epoll_ctl in its steady
// state. One waiter at a time. Destroy it before closing the descriptor, on its loop (or after
// the app has stopped). A wait that is cancelled (its coroutine destroyed) only stops waiting.
#pragma once

#include <coroutine>
#include <cstdint>
#include <utility>

#include <rivet/async.hpp>
#include <rivet/task.hpp>

namespace rivet {

namespace detail {

struct FdWatchState;  // out of line (src/app/async/fd_watch.cpp)
FdWatchState* open_fd_watch(EventLoop& loop, int fd);
void close_fd_watch(FdWatchState* s) noexcept;
void arm_fd_watch(FdWatchState* s, uint32_t interest, std::coroutine_handle<> h, uint32_t* fired);
void disarm_fd_watch(FdWatchState* s) noexcept;
bool fd_watch_stirred(const FdWatchState* s) noexcept;
void clear_fd_watch_stirred(FdWatchState* s) noexcept;

class FdWatchAwaiter {
public:
    static constexpr bool rivet_cancel_safe = true;
    FdWatchAwaiter(FdWatchState* s, uint32_t interest) : s_(s), interest_(interest) {}
    FdWatchAwaiter(FdWatchAwaiter&& o) noexcept
        : s_(o.s_), interest_(o.interest_), armed_(std::exchange(o.armed_, false)) {}
    ~FdWatchAwaiter() {
        if (armed_) disarm_fd_watch(s_);  // cancelled while waiting: never resumed
    }
    bool await_ready() const noexcept { return false; }
    template <class P>
    void await_suspend(std::coroutine_handle<P> h) {
        if (RootState* root = root_of(h)) root->on_suspend();
        arm_fd_watch(s_, interest_, h, &fired_);
        armed_ = true;
    }
    Interest await_resume() noexcept {
        armed_ = false;
        return Interest(uint8_t(fired_));
    }

private:
    FdWatchState* s_;
    uint32_t interest_;
    bool armed_ = false;
    uint32_t fired_ = 0;
};

}  // namespace detail

class FdWatch {
public:
    FdWatch() = default;
    // Registers `fd` with the current loop (std::logic_error off a loop).
    explicit FdWatch(int fd) : s_(detail::open_fd_watch(detail::current_loop(), fd)) {}
    FdWatch(FdWatch&& o) noexcept : s_(std::exchange(o.s_, nullptr)) {}
    FdWatch& operator=(FdWatch&& o) noexcept {
        if (this != &o) {
            reset();
            s_ = std::exchange(o.s_, nullptr);
        }
        return *this;
    }
    ~FdWatch() { reset(); }
    void reset() noexcept {
        if (s_) detail::close_fd_watch(std::exchange(s_, nullptr));
    }
    explicit operator bool() const { return s_ != nullptr; }

    // Resumes when the descriptor is ready for `interest` (Read, Write or both) or has hung up
    // or failed, and says which.
    detail::FdWatchAwaiter wait(Interest interest) {
        return detail::FdWatchAwaiter(s_, uint32_t(interest) & 3u);
    }
    // Whether it became ready (or hung up) while nobody waited; cleared by clear_stirred().
    bool stirred() const { return s_ && detail::fd_watch_stirred(s_); }
    void clear_stirred() {
        if (s_) detail::clear_fd_watch_stirred(s_);
    }

private:
    detail::FdWatchState* s_ = nullptr;
};

}  // namespace rivet
