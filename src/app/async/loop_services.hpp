// The framework's per-loop services behind rivet::EventLoop and the awaitables of
// rivet/async.hpp: the loop itself, the worker pool, and what a full pool answers.
#pragma once

#include <memory>
#include <unordered_set>
#include <vector>

#include <rivet/event_loop.hpp>

#include "app/async/spawned.hpp"

namespace rivet::net {
class Loop;
}

namespace rivet::detail {
struct FdWatchState;
}

namespace rivet::app {

class WorkerPool;
class Metrics;

struct LoopServices {
    net::Loop* loop = nullptr;
    WorkerPool* pool = nullptr;
    unsigned retry_after_s = 1;  // of the 503 when the pool's queue is full
    Metrics* metrics = nullptr;  // the app's (event streams count there); set before the loops run
    std::unique_ptr<SpawnedTasks> spawned = std::make_unique<SpawnedTasks>();
    std::unordered_set<detail::FdWatchState*> fd_watches;  // rivet::FdWatch on this loop
};

// One EventLoop per I/O loop, made before the loops run and kept until they have ended.
class EventLoops {
public:
    // Tags each net::Loop so that EventLoop::current() finds its EventLoop.
    EventLoops(std::vector<net::Loop*> loops, WorkerPool* pool, unsigned retry_after_s);
    ~EventLoops();

    EventLoop& at(unsigned i) { return *loops_.at(i); }
    size_t size() const { return loops_.size(); }
    // The app stops: each loop cancels its spawned tasks on its next turn (before the drain
    // that is posted after this).
    void cancel_spawned();
    void set_metrics(Metrics* m) {
        for (auto& s : services_) s->metrics = m;
    }

private:
    std::vector<std::unique_ptr<LoopServices>> services_;
    std::vector<std::unique_ptr<EventLoop>> loops_;
};

}  // namespace rivet::app

namespace rivet::detail {

// The loops have ended: FdWatches still open forget them (fd_watch.cpp).
void detach_fd_watches(app::LoopServices& services);

struct LoopAccess {
    static std::unique_ptr<EventLoop> make(app::LoopServices* s, unsigned index) {
        return std::unique_ptr<EventLoop>(new EventLoop(s, index));
    }
    static app::LoopServices& services(const EventLoop& l) {
        return *static_cast<app::LoopServices*>(l.impl_);
    }
};

}  // namespace rivet::detail
