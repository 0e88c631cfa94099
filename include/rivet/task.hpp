// rivet::Task<T>: a coroutine that handlers return and that other tasks co_await.
//
//   rivet::Task<int> count(std::string key) { co_await rivet::sleep(10ms); co_return 42; }
//   app.get("/n", [](rivet::Request& req, rivet::Response& res) -> rivet::Task<> {
//       int n = co_await count(std::string(req.param("key")));     // exceptions propagate here
//       res.text(std::to_string(n));
//   });
//
// A Task starts when it is awaited (or, for a handler, when the framework runs it) and resumes
// its awaiter when it ends. Everything runs on the request's I/O loop: a task is never resumed
// on another thread (rivet::on_workers moves work to the pool and comes back).
//
// A Task owns its coroutine: destroying it destroys the frame. A handler's task is destroyed at
// its current suspension when its client goes away (see rivet/async.hpp).
#pragma once

#include <coroutine>
#include <cstddef>
#include <exception>
#include <optional>
#include <type_traits>
#include <utility>

namespace rivet {

template <class T = void>
class Task;

namespace detail {

// The framework's side of a handler's coroutine: told when it first suspends (the request must
// then stop pointing into the connection's buffer) and when it ends. Tasks awaited by the
// handler share their root's, so the awaitables deep inside can find it.
class RootState {
public:
    virtual void on_suspend() = 0;  // before an awaitable's side effects start
    // The root coroutine ended (at its final suspension); returns what runs next (symmetric
    // transfer: a when_all's awaiter, or std::noop_coroutine()).
    virtual std::coroutine_handle<> on_done() = 0;
    // Destroys the cancelled handler's frame once the job below has ended (doomed was set).
    virtual void on_work_ended_after_cancel() = 0;

    // The on_workers job the coroutine waits for, if any: a cancel must not free the frame
    // while a worker may still use references into it (see async.hpp); it sets `doomed`
    // instead, and the job's end destroys the frame rather than resuming it.
    class Work* work = nullptr;
    bool doomed = false;

protected:
    ~RootState() = default;
};

// Coroutine frames come from a per-thread cache of freed ones (out of line, src/app): a
// handler that never waits then costs no trip to malloc.
void* allocate_frame(std::size_t size);
void free_frame(void* frame, std::size_t size) noexcept;

class PromiseBase {
public:
    static void* operator new(std::size_t size) { return allocate_frame(size); }
    static void operator delete(void* frame, std::size_t size) noexcept { free_frame(frame, size); }

    std::suspend_always initial_suspend() noexcept { return {}; }

    struct FinalAwaiter {
        bool await_ready() noexcept { return false; }
        template <class P>
        std::coroutine_handle<> await_suspend(std::coroutine_handle<P> h) noexcept {
            PromiseBase& p = h.promise();
            if (p.continuation_) return p.continuation_;  // symmetric transfer: no stack growth
            // A root: its owner answers or goes on, and may destroy the frame (do not touch p
            // after).
            if (RootState* root = p.root_) return root->on_done();
            return std::noop_coroutine();
        }
        void await_resume() noexcept {}
    };
    FinalAwaiter final_suspend() noexcept { return {}; }
    void unhandled_exception() noexcept { error_ = std::current_exception(); }

    RootState* root() const { return root_; }
    void set_root(RootState* root) { root_ = root; }
    void set_continuation(std::coroutine_handle<> c) { continuation_ = c; }
    std::exception_ptr error() const { return error_; }

protected:
    void rethrow_if_failed() const {
        if (error_) std::rethrow_exception(error_);
    }

private:
    std::coroutine_handle<> continuation_;
    RootState* root_ = nullptr;
    std::exception_ptr error_;
};

template <class T>
class Promise : public PromiseBase {
public:
    Task<T> get_return_object() noexcept;
    template <class U>
    void return_value(U&& v) {
        value_.emplace(std::forward<U>(v));
    }
    T take() {
        rethrow_if_failed();
        return std::move(*value_);
    }

private:
    std::optional<T> value_;
};

template <>
class Promise<void> : public PromiseBase {
public:
    Task<void> get_return_object() noexcept;
    void return_void() noexcept {}
    void take() { rethrow_if_failed(); }
};

// For the framework and the toolbox: takes a task's frame out of it (the caller owns it then).
struct TaskAccess {
    template <class T>
    static std::coroutine_handle<Promise<T>> release(Task<T>& t) {
        return std::exchange(t.h_, {});
    }
};

}  // namespace detail

template <class T>
class [[nodiscard]] Task {
public:
    using promise_type = detail::Promise<T>;
    using Handle = std::coroutine_handle<promise_type>;

    Task() = default;
    explicit Task(Handle h) noexcept : h_(h) {}
    Task(Task&& o) noexcept : h_(std::exchange(o.h_, {})) {}
    Task& operator=(Task&& o) noexcept {
        if (this != &o) {
            if (h_) h_.destroy();
            h_ = std::exchange(o.h_, {});
        }
        return *this;
    }
    Task(const Task&) = delete;
    Task& operator=(const Task&) = delete;
    ~Task() {
        if (h_) h_.destroy();
    }

    bool valid() const noexcept { return bool(h_); }

    struct Awaiter {
        Handle h;
        bool await_ready() noexcept { return !h || h.done(); }
        template <class P>
        std::coroutine_handle<> await_suspend(std::coroutine_handle<P> caller) noexcept {
            h.promise().set_continuation(caller);
            if constexpr (std::is_base_of_v<detail::PromiseBase, P>)
                h.promise().set_root(caller.promise().root());
            return h;  // symmetric transfer: the awaited task starts now
        }
        T await_resume() { return h.promise().take(); }
    };
    // co_await task: runs it, resumes here when it ends, gives its value or rethrows.
    Awaiter operator co_await() && noexcept { return Awaiter{h_}; }

private:
    friend struct detail::TaskAccess;
    Handle h_;
};

namespace detail {

template <class T>
Task<T> Promise<T>::get_return_object() noexcept {
    return Task<T>(std::coroutine_handle<Promise<T>>::from_promise(*this));
}

inline Task<void> Promise<void>::get_return_object() noexcept {
    return Task<void>(std::coroutine_handle<Promise<void>>::from_promise(*this));
}

// The root state of the coroutine awaiting, when it is a Task (nullptr for other coroutines).
template <class P>
RootState* root_of(std::coroutine_handle<P> h) noexcept {
    if constexpr (std::is_base_of_v<PromiseBase, P>)
        return h.promise().root();
    else
        return nullptr;
}

}  // namespace detail

}  // namespace rivet
