// rivet::ShutdownSignal: learn that the server has begun to stop (its lame duck or its drain,
// whichever comes first), so that long-lived answers (event streams, long polls, WebSockets)
// end promptly instead of holding the drain until its timeout.
//
//   rivet::ShutdownSignal stopping = app.shutdown_signal();
//   app.on_shutdown([] { hub.close_all(); });           // once, on the thread that stops
//   app.get("/poll", [stopping](rivet::Request&, rivet::Response& res) -> rivet::Task<> {
//       co_await stopping.wait();                         // resumes on this handler's loop
//       res.status(204);
//   });
//   if (stopping.stopping()) ...                          // any thread
//
// A signal fires once. App::begin_lame_duck(), App::stop(), App::hand_over() and App::run's
// SIGINT/SIGTERM fire the app's, before anything else of the stop happens.
#pragma once

#include <coroutine>
#include <cstdint>
#include <functional>
#include <memory>
#include <utility>

#include <rivet/async.hpp>
#include <rivet/event_loop.hpp>
#include <rivet/task.hpp>

namespace rivet {

namespace detail {

struct ShutdownState;
struct ShutdownWait;
// Out of line (src/app/shutdown.cpp).
std::shared_ptr<ShutdownWait> start_shutdown_wait(const std::shared_ptr<ShutdownState>& state,
                                                  EventLoop& loop, std::coroutine_handle<> h);
void stop_shutdown_wait(const std::shared_ptr<ShutdownState>& state,
                        const std::shared_ptr<ShutdownWait>& wait);
bool shutdown_fired(const ShutdownState& state);

class ShutdownAwaiter {
public:
    static constexpr bool rivet_cancel_safe = true;
    explicit ShutdownAwaiter(std::shared_ptr<ShutdownState> state) : state_(std::move(state)) {}
    ShutdownAwaiter(ShutdownAwaiter&& o) noexcept
        : state_(std::move(o.state_)), wait_(std::move(o.wait_)) {}
    ~ShutdownAwaiter() {
        if (wait_) stop_shutdown_wait(state_, wait_);  // a cancelled handler: never resumed
    }
    bool await_ready() const noexcept { return shutdown_fired(*state_); }
    template <class P>
    void await_suspend(std::coroutine_handle<P> h) {
        EventLoop& loop = current_loop();
        if (RootState* root = root_of(h)) root->on_suspend();
        wait_ = start_shutdown_wait(state_, loop, h);
    }
    void await_resume() noexcept {}

private:
    std::shared_ptr<ShutdownState> state_;
    std::shared_ptr<ShutdownWait> wait_;
};

}  // namespace detail

// Copies share one signal. Thread-safe.
class ShutdownSignal {
public:
    ShutdownSignal();  // a signal of its own, not fired (App::shutdown_signal() gives the app's)

    // True once the stop began. Any thread.
    bool stopping() const;
    // Runs `fn` once when the stop begins, on the thread that begins it (App::run's main thread
    // on a signal; the caller of begin_lame_duck(), stop() or hand_over()); at once, on this
    // thread, when it has begun already. Returns an id for unsubscribe() (0: ran already).
    uint64_t subscribe(std::function<void()> fn) const;
    // Forgets a callback that has not run (it may be running now on another thread).
    void unsubscribe(uint64_t id) const;
    // co_await signal.wait() in a coroutine handler: resumes on its loop when the stop begins
    // (at once when it has). A handler cancelled meanwhile (its client left) is never resumed.
    detail::ShutdownAwaiter wait() const { return detail::ShutdownAwaiter(state_); }
    // Fires it: runs the callbacks, resumes the waiting coroutines. Later calls do nothing.
    void trigger() const;

private:
    std::shared_ptr<detail::ShutdownState> state_;
};

}  // namespace rivet
