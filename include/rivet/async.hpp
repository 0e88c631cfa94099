// What a coroutine handler can wait for without blocking its I/O loop:
//
//   co_await rivet::sleep(200ms);                              // a timer on this loop
//   auto pdf = co_await rivet::on_workers([body = std::string(req.body())] {
//       return render(body);                                   // on the worker pool
//   });                                                        // back on the loop, or rethrows
//   co_await rivet::readable(fd);  co_await rivet::writable(fd); // e.g. libpq, c-ares, curl
//
// Lifetimes. Until a handler first suspends, its Request points into the connection's buffer;
// at that moment the framework copies it (Request::detach, in place), so `req` stays valid for
// the whole handler, but string_views taken from it *before* the first co_await point to the
// old bytes: copy them (std::string) or take them again after. After the first suspension
// req.loop_index() is Request::kNoLoop; EventLoop::current() still names the loop.
//
// Cancellation. When the client goes away while the handler waits (it reset or closed the
// connection, or a timeout or drain cut it off), the handler's coroutine is destroyed at its
// current suspension: locals are destroyed, a timer or descriptor watch is removed, and a
// worker job's result is dropped when it arrives. A job already running cannot be stopped: the
// frame is destroyed only once it ends, so its references into the frame stay valid.
// Code after the co_await never runs; put clean-up in destructors.
#pragma once

#include <chrono>
#include <coroutine>
#include <cstdint>
#include <exception>
#include <functional>
#include <memory>
#include <optional>
#include <type_traits>
#include <utility>

#include <rivet/event_loop.hpp>
#include <rivet/task.hpp>

namespace rivet {

namespace detail {

// Out of line (src/app/async/loop_services.cpp): the current loop's services.
EventLoop& current_loop();  // throws std::logic_error off an I/O loop
uint64_t start_timer(EventLoop& loop, int64_t ms, std::coroutine_handle<> h);
void cancel_timer(EventLoop& loop, uint64_t id);
// One-shot: resumes `h` once `fd` is ready for `interest`, after storing what fired in *fired.
uint64_t start_watch(EventLoop& loop, int fd, uint32_t interest, std::coroutine_handle<> h,
                     uint32_t* fired);
void stop_watch(EventLoop& loop, uint64_t id);

// An on_workers job in flight: shared by the awaiter (on the loop) and the job (on a worker).
class Work {
public:
    virtual ~Work() = default;
    virtual void run() noexcept = 0;  // on a worker

    std::coroutine_handle<> waiter;
    RootState* root = nullptr;
    bool abandoned = false;  // the awaiter is gone (frame destroyed): drop the result
    std::exception_ptr error;
    // Its place in the pool's queue, until its result is back on the loop (0 then); read and
    // written on the loop only.
    uint64_t ticket = 0;
};
// Queues `work` on the current loop's app's pool; false when its queue is full.
bool submit_work(EventLoop& loop, std::shared_ptr<Work> work);
// Takes `work` out of the pool's queue if no worker has started it: true when it never will.
// On the loop that submitted it.
bool withdraw_work(Work& work) noexcept;
[[noreturn]] void throw_pool_full(EventLoop& loop);

template <class R, class F>
class WorkOf final : public Work {
public:
    explicit WorkOf(F&& fn) : fn_(std::move(fn)) {}
    void run() noexcept override {
        try {
            if constexpr (std::is_void_v<R>)
                fn_();
            else
                value.emplace(fn_());
        } catch (...) {
            error = std::current_exception();
        }
    }
    std::optional<std::conditional_t<std::is_void_v<R>, char, R>> value;

private:
    F fn_;
};

class SleepAwaiter {
public:
    static constexpr bool rivet_cancel_safe = true;
    explicit SleepAwaiter(int64_t ms) : ms_(ms) {}
    SleepAwaiter(SleepAwaiter&& o) noexcept
        : ms_(o.ms_), loop_(std::exchange(o.loop_, nullptr)), id_(o.id_) {}
    ~SleepAwaiter() {
        if (loop_) cancel_timer(*loop_, id_);  // a cancelled handler: the timer must not fire
    }
    bool await_ready() const noexcept { return ms_ <= 0; }
    template <class P>
    void await_suspend(std::coroutine_handle<P> h) {
        EventLoop& loop = current_loop();
        if (RootState* root = root_of(h)) root->on_suspend();
        id_ = start_timer(loop, ms_, h);
        loop_ = &loop;
    }
    void await_resume() noexcept {}

private:
    int64_t ms_;
    EventLoop* loop_ = nullptr;
    uint64_t id_ = 0;
};

class ReadyAwaiter {
public:
    static constexpr bool rivet_cancel_safe = true;
    // `interest`: net-level bits, 1 readable, 2 writable (hang-ups are always reported, as 4).
    ReadyAwaiter(int fd, uint32_t interest) : fd_(fd), interest_(interest) {}
    ReadyAwaiter(ReadyAwaiter&& o) noexcept
        : fd_(o.fd_),
          interest_(o.interest_),
          loop_(std::exchange(o.loop_, nullptr)),
          id_(o.id_),
          fired_(o.fired_) {}
    ~ReadyAwaiter() {
        if (loop_) stop_watch(*loop_, id_);
    }
    bool await_ready() const noexcept { return false; }
    template <class P>
    void await_suspend(std::coroutine_handle<P> h) {
        EventLoop& loop = current_loop();
        if (RootState* root = root_of(h)) root->on_suspend();
        id_ = start_watch(loop, fd_, interest_, h, &fired_);
        loop_ = &loop;
    }
    uint32_t await_resume() noexcept { return fired_; }

private:
    int fd_;
    uint32_t interest_;
    EventLoop* loop_ = nullptr;
    uint64_t id_ = 0;
    uint32_t fired_ = 0;  // set by the watch before it resumes
};

template <class R, class F>
class WorkAwaiter {
public:
    static constexpr bool rivet_cancel_safe = true;
    explicit WorkAwaiter(F fn) : fn_(std::move(fn)) {}
    WorkAwaiter(WorkAwaiter&&) = default;
    ~WorkAwaiter() {
        if (work_) {
            // Destroyed before its result came back (a cancelled handler, a when_any loser, a
            // timeout): a job still queued is dropped, one running finishes unheard.
            if (work_->ticket) withdraw_work(*work_);
            work_->abandoned = true;
            if (work_->root && work_->root->work == work_.get()) work_->root->work = nullptr;
        }
    }
    bool await_ready() const noexcept { return false; }
    template <class P>
    bool await_suspend(std::coroutine_handle<P> h) {
        EventLoop& loop = current_loop();
        RootState* root = root_of(h);
        if (root) root->on_suspend();  // before the job can see the request
        auto work = std::make_shared<WorkOf<R, F>>(std::move(*fn_));
        fn_.reset();
        work->waiter = h;
        work->root = root;
        if (!submit_work(loop, work)) {
            loop_ = &loop;  // await_resume throws the 503
            return false;
        }
        if (root) root->work = work.get();
        work_ = std::move(work);
        return true;
    }
    R await_resume() {
        if (!work_) throw_pool_full(*loop_);
        if (work_->error) std::rethrow_exception(work_->error);
        if constexpr (!std::is_void_v<R>) return std::move(*work_->value);
    }

private:
    std::optional<F> fn_;
    std::shared_ptr<WorkOf<R, F>> work_;
    EventLoop* loop_ = nullptr;
};

}  // namespace detail

// Resumes after `d` on the current loop (a timer: the loop serves others meanwhile).
template <class Rep, class Period>
detail::SleepAwaiter sleep(std::chrono::duration<Rep, Period> d) {
    return detail::SleepAwaiter(std::chrono::ceil<std::chrono::milliseconds>(d).count());
}

// What a descriptor is ready for: rivet::ready(fd, Interest::Read | Interest::Write) waits for
// either and says which came (Hangup: it hung up or failed; the next read or write tells which).
enum class Interest : uint8_t { Read = 1, Write = 2, Hangup = 4 };
constexpr Interest operator|(Interest a, Interest b) {
    return Interest(uint8_t(a) | uint8_t(b));
}
constexpr Interest operator&(Interest a, Interest b) {
    return Interest(uint8_t(a) & uint8_t(b));
}
constexpr bool any(Interest i) {
    return uint8_t(i) != 0;
}

// Resumes when `fd` is ready for `interest` (or has hung up or failed) and gives what fired. One
// waiter per descriptor at a time; the descriptor must not be one the server itself watches.
// Wrapped in with_timeout (rivet/when.hpp) it gets a deadline.
class ReadyWait {
public:
    static constexpr bool rivet_cancel_safe = true;
    ReadyWait(int fd, Interest interest) : awaiter_(fd, uint32_t(interest) & 3u) {}
    bool await_ready() const noexcept { return false; }
    template <class P>
    void await_suspend(std::coroutine_handle<P> h) {
        awaiter_.await_suspend(h);
    }
    Interest await_resume() noexcept { return Interest(uint8_t(awaiter_.await_resume())); }

private:
    detail::ReadyAwaiter awaiter_;
};
inline ReadyWait ready(int fd, Interest interest) {
    return ReadyWait(fd, interest);
}

// rivet::ready for one direction, when what fired does not matter (the next read or write says).
class OneReadyWait : public ReadyWait {
public:
    using ReadyWait::ReadyWait;
    void await_resume() noexcept {}
};
inline OneReadyWait readable(int fd) {
    return OneReadyWait(fd, Interest::Read);
}
inline OneReadyWait writable(int fd) {
    return OneReadyWait(fd, Interest::Write);
}

// Runs `fn()` on the app's worker pool and resumes on the loop with its result, or rethrows
// its exception. With the pool's queue full it throws HttpError(503) with Retry-After. `fn`
// runs on another thread: give it copies, not views of the request.
template <class F>
auto on_workers(F fn) {
    using R = std::invoke_result_t<F&>;
    return detail::WorkAwaiter<R, F>(std::move(fn));
}

}  // namespace rivet
