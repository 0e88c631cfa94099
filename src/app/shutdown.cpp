// rivet::ShutdownSignal (rivet/shutdown.hpp): a flag set once, the callbacks to run then, and
// the coroutines waiting for it (each resumed on its own loop by a posted task).
#include <rivet/shutdown.hpp>

#include <atomic>
#include <mutex>
#include <vector>

namespace rivet {

namespace detail {

struct ShutdownState {
    std::atomic<bool> fired{false};
    std::mutex mutex;
    uint64_t next_id = 1;
    std::vector<std::pair<uint64_t, std::function<void()>>> callbacks;
};

// A coroutine waiting: `gone` is set when its awaiter is destroyed (the handler was cancelled,
// or it was resumed); both happen on its loop, where the resuming task runs too.
struct ShutdownWait {
    std::coroutine_handle<> handle;
    uint64_t id = 0;
    bool gone = false;
};

bool shutdown_fired(const ShutdownState& state) {
    return state.fired.load(std::memory_order_acquire);
}

namespace {

uint64_t subscribe(ShutdownState& s, std::function<void()> fn) {
    {
        std::lock_guard lock(s.mutex);
        if (!s.fired.load(std::memory_order_relaxed)) {
            s.callbacks.emplace_back(s.next_id, std::move(fn));
            return s.next_id++;
        }
    }
    fn();
    return 0;
}

void unsubscribe(ShutdownState& s, uint64_t id) {
    if (id == 0) return;
    std::lock_guard lock(s.mutex);
    std::erase_if(s.callbacks, [id](const auto& c) { return c.first == id; });
}

}  // namespace

std::shared_ptr<ShutdownWait> start_shutdown_wait(const std::shared_ptr<ShutdownState>& state,
                                                  EventLoop& loop, std::coroutine_handle<> h) {
    auto wait = std::make_shared<ShutdownWait>();
    wait->handle = h;
    // Always through the loop's queue, even when it fired meanwhile: the coroutine is still
    // suspending while this runs.
    wait->id = subscribe(*state, [wait, &loop] {
        loop.post([wait] {
            if (!wait->gone) wait->handle.resume();
        });
    });
    return wait;
}

void stop_shutdown_wait(const std::shared_ptr<ShutdownState>& state,
                        const std::shared_ptr<ShutdownWait>& wait) {
    wait->gone = true;
    unsubscribe(*state, wait->id);
}

}  // namespace detail

ShutdownSignal::ShutdownSignal() : state_(std::make_shared<detail::ShutdownState>()) {}

bool ShutdownSignal::stopping() const {
    return detail::shutdown_fired(*state_);
}

uint64_t ShutdownSignal::subscribe(std::function<void()> fn) const {
    return detail::subscribe(*state_, std::move(fn));
}

void ShutdownSignal::unsubscribe(uint64_t id) const {
    detail::unsubscribe(*state_, id);
}

void ShutdownSignal::trigger() const {
    std::vector<std::pair<uint64_t, std::function<void()>>> run;
    {
        std::lock_guard lock(state_->mutex);
        if (state_->fired.exchange(true, std::memory_order_acq_rel)) return;
        run.swap(state_->callbacks);
    }
    // Outside the lock: a callback may subscribe or unsubscribe (it then runs at once).
    for (auto& [id, fn] : run) {
        try {
            fn();
        } catch (...) {
            // One callback's failure must not keep the others, or the stop, from going on.
        }
    }
}

}  // namespace rivet
