// rivet::Completion and rivet::until_complete: the supported way to write an awaitable of one's
// own, for any operation that ends in a callback (a client library, a timer, another thread).
//
//   rivet::Task<std::string> lookup(Cache& cache, std::string key) {
//       co_return co_await rivet::until_complete<std::string>([&](rivet::Completion<std::string> c)
//       {
//           auto id = cache.async_get(key, [c](std::string v) { c.done(std::move(v)); });
//           c.on_cancel([&cache, id] { cache.forget(id); });      // the handler was cancelled
//       });
//   }
//
// `start` runs when the coroutine suspends, on its loop. The operation then calls c.done(value)
// (or c.fail(exception_ptr)) once, from any thread; the coroutine resumes later on its own loop,
// never inside done(). When the coroutine is cancelled first (its client went away, a timeout or
// when_any dropped it: its frame is destroyed at this suspension), the on_cancel function runs
// on the loop, and a later done() or fail() does nothing: the operation may finish whenever it
// likes, it can never resume a destroyed frame. Keep nothing of the frame in the callback that
// outlives the cancel (capture `c`, copies, or what on_cancel forgets).
//
// on_cancel runs whenever the coroutine is destroyed before it resumes, even if done() came
// first and its resume was still queued: what done() handed over (a permit, a queued item) can
// then be passed on. An operation completed from another thread may see on_cancel run while
// its done() is under way; done() is then ignored.
//
// Why not a hand-written awaiter that stores the coroutine_handle and resumes it from a
// callback? Because nothing tells the callback the frame is gone: a handler cancelled while the
// callback is pending resumes freed memory. Completion is that missing link.
#pragma once

#include <atomic>
#include <coroutine>
#include <exception>
#include <functional>
#include <memory>
#include <optional>
#include <type_traits>
#include <utility>

#include <rivet/async.hpp>
#include <rivet/event_loop.hpp>
#include <rivet/task.hpp>

namespace rivet {

namespace detail {

template <class T, class Start>
class CompletionAwaiter;

template <class T>
using StoredValue = std::conditional_t<std::is_void_v<T>, char, T>;

// Shared by the Completion copies (any thread) and the awaiter (the loop).
template <class T>
struct CompletionState {
    std::atomic<bool> finished{false};  // done() or fail() came: the first one wins
    std::optional<StoredValue<T>> value;
    std::exception_ptr error;
    // The loop's side only:
    EventLoop* loop = nullptr;
    std::coroutine_handle<> waiter;
    bool waiter_gone = false;  // the awaiter was destroyed: never resume
    std::function<void()> on_cancel;

    // After value or error is set by the one thread that won `finished`.
    static void resume_on_loop(const std::shared_ptr<CompletionState>& s) {
        s->loop->post([s] {
            if (!s->waiter_gone) s->waiter.resume();
        });
    }
};

}  // namespace detail

template <class T = void>
class Completion {
public:
    // Resumes the coroutine with `value` (not for Completion<void>).
    template <class U = T>
    requires(!std::is_void_v<T> && std::is_convertible_v<U&&, T>) void done(U&& value) const {
        if (s_->finished.exchange(true)) return;
        s_->value.emplace(std::forward<U>(value));
        State::resume_on_loop(s_);
    }
    // Resumes a Completion<void>'s coroutine.
    void done() const requires std::is_void_v<T> {
        if (s_->finished.exchange(true)) return;
        s_->value.emplace();
        State::resume_on_loop(s_);
    }
    // Resumes the coroutine by throwing `error` from its co_await.
    void fail(std::exception_ptr error) const {
        if (s_->finished.exchange(true)) return;
        s_->error = std::move(error);
        State::resume_on_loop(s_);
    }
    // Whether the coroutine was cancelled (on its loop's thread; elsewhere only a hint).
    bool cancelled() const { return s_->waiter_gone; }
    // Runs `fn` on the loop if the coroutine is cancelled before it resumes (see the top of this
    // file). Call it from `start` (or later on the loop); a second call replaces the first.
    void on_cancel(std::function<void()> fn) const { s_->on_cancel = std::move(fn); }

private:
    using State = detail::CompletionState<T>;
    template <class, class>
    friend class detail::CompletionAwaiter;
    explicit Completion(std::shared_ptr<State> s) : s_(std::move(s)) {}
    std::shared_ptr<State> s_;
};

namespace detail {

template <class T, class Start>
class CompletionAwaiter {
public:
    explicit CompletionAwaiter(Start start) : start_(std::move(start)) {}
    CompletionAwaiter(CompletionAwaiter&& o) noexcept
        : start_(std::move(o.start_)), s_(std::move(o.s_)) {}
    ~CompletionAwaiter() {
        if (!s_ || s_->waiter_gone) return;
        s_->waiter_gone = true;
        // Cancelled at this suspension (resumed awaiters were marked in await_resume), perhaps
        // with its resume already queued: on_cancel runs either way.
        if (s_->on_cancel) std::exchange(s_->on_cancel, nullptr)();
    }
    bool await_ready() const noexcept { return false; }
    template <class P>
    void await_suspend(std::coroutine_handle<P> h) {
        if (RootState* root = root_of(h)) root->on_suspend();
        s_ = std::make_shared<CompletionState<T>>();
        s_->loop = &current_loop();
        s_->waiter = h;
        try {
            start_(Completion<T>(s_));  // may call done() at once: the resume is posted anyway
        } catch (...) {
            s_->waiter_gone = true;  // the co_await throws this; a late done() must not resume
            s_->on_cancel = nullptr;
            throw;
        }
    }
    T await_resume() {
        s_->waiter_gone = true;  // ended normally: the destructor has nothing to cancel
        s_->on_cancel = nullptr;
        if (s_->error) std::rethrow_exception(s_->error);
        if constexpr (!std::is_void_v<T>) return std::move(*s_->value);
    }

private:
    Start start_;
    std::shared_ptr<CompletionState<T>> s_;
};

}  // namespace detail

// Suspends the coroutine and calls start(Completion<T>); see the top of this file.
template <class T = void, class Start>
requires std::is_invocable_v<Start&, Completion<T>> detail::CompletionAwaiter<T, Start>
until_complete(Start start) {
    return detail::CompletionAwaiter<T, Start>(std::move(start));
}

}  // namespace rivet
