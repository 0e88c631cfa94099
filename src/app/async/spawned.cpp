// rivet::spawn (rivet/spawn.hpp): each spawned coroutine's root, and the set of them per loop
// that the app cancels when it stops.
#include "app/async/spawned.hpp"

#include <cstdio>
#include <exception>
#include <stdexcept>

#include <rivet/spawn.hpp>

#include "app/async/loop_services.hpp"
#include "net/loop.hpp"

namespace rivet::app {

class SpawnedTask final : public detail::RootState {
public:
    SpawnedTask(SpawnedTasks& owner, std::coroutine_handle<detail::Promise<void>> frame)
        : owner_(owner), frame_(frame) {
        frame.promise().set_root(this);
    }
    void start() { frame_.resume(); }

    void on_suspend() override {}  // no request to detach
    std::coroutine_handle<> on_done() override {
        if (auto error = frame_.promise().error()) report(error);
        owner_.tasks_.erase(this);
        destroy();
        return std::noop_coroutine();
    }
    void on_work_ended_after_cancel() override { destroy(); }

    // The app stops: gone now, or once its on_workers job ends (the job may use the frame).
    void cancel() {
        if (work) {
            doomed = true;
            return;
        }
        destroy();
    }

private:
    static void report(std::exception_ptr error) {
        try {
            std::rethrow_exception(error);
        } catch (const std::exception& e) {
            std::fprintf(stderr, "rivet: a spawned task ended with an exception: %s\n", e.what());
        } catch (...) {
            std::fprintf(stderr, "rivet: a spawned task ended with an exception\n");
        }
    }
    void destroy() {
        frame_.destroy();
        delete this;
    }

    SpawnedTasks& owner_;
    std::coroutine_handle<detail::Promise<void>> frame_;
};

void SpawnedTasks::start(std::coroutine_handle<detail::Promise<void>> frame) {
    auto* task = new SpawnedTask(*this, frame);
    tasks_.insert(task);
    task->start();
}

void SpawnedTasks::cancel_all() {
    // One at a time: a cancelled task's destructors may end (and erase) another.
    while (!tasks_.empty()) {
        SpawnedTask* task = *tasks_.begin();
        tasks_.erase(tasks_.begin());
        task->cancel();
    }
}

SpawnedTasks::~SpawnedTasks() {
    cancel_all();
}

}  // namespace rivet::app

namespace rivet::detail {

namespace {

// A frame on its way to its loop: destroyed unstarted if the loop stops before it runs.
class FrameInTransit {
public:
    explicit FrameInTransit(std::coroutine_handle<Promise<void>> frame) : frame_(frame) {}
    FrameInTransit(const FrameInTransit&) = delete;
    FrameInTransit& operator=(const FrameInTransit&) = delete;
    ~FrameInTransit() {
        if (frame_) frame_.destroy();
    }
    std::coroutine_handle<Promise<void>> take() { return std::exchange(frame_, {}); }

private:
    std::coroutine_handle<Promise<void>> frame_;
};

}  // namespace

void spawn_frame(EventLoop& loop, std::coroutine_handle<Promise<void>> frame) {
    if (!frame) throw std::invalid_argument("rivet::spawn: an empty task");
    auto& tasks = *LoopAccess::services(loop).spawned;
    // Posted even on its own loop: the spawner goes on first, and a frame never starts inside
    // another coroutine's step.
    auto transit = std::make_shared<FrameInTransit>(frame);
    loop.post([transit, &tasks] { tasks.start(transit->take()); });
}

}  // namespace rivet::detail
