// rivet::EventLoop and the out-of-line parts of rivet/async.hpp's awaitables, over net::Loop.
#include "app/async/loop_services.hpp"

#include <stdexcept>
#include <string>

#include <rivet/async.hpp>
#include <rivet/http_error.hpp>

#include "app/async/worker_pool.hpp"
#include "net/loop.hpp"

namespace rivet {

namespace {

net::Loop& net_loop(const EventLoop& l) {
    return *detail::LoopAccess::services(l).loop;
}

}  // namespace

void EventLoop::post(Function fn) const {
    net_loop(*this).post(std::move(fn));
}

TimerHandle EventLoop::call_after(std::chrono::milliseconds delay, Function fn) const {
    uint64_t ms = delay.count() > 0 ? uint64_t(delay.count()) : 0;
    return TimerHandle(this, net_loop(*this).call_after(ms, std::move(fn)));
}

bool EventLoop::on_this_thread() const {
    return net_loop(*this).on_loop_thread();
}

EventLoop* EventLoop::current() {
    net::Loop* l = net::Loop::current();
    return l ? static_cast<EventLoop*>(l->user_data()) : nullptr;
}

void TimerHandle::cancel() const {
    if (loop_) net_loop(*loop_).cancel_timer(id_);
}

namespace detail {

EventLoop& current_loop() {
    EventLoop* l = EventLoop::current();
    if (!l) throw std::logic_error("rivet: awaited off an I/O loop (only handlers can wait)");
    return *l;
}

uint64_t start_timer(EventLoop& loop, int64_t ms, std::coroutine_handle<> h) {
    return net_loop(loop).call_after(uint64_t(ms), [h] { h.resume(); });
}

void cancel_timer(EventLoop& loop, uint64_t id) {
    net_loop(loop).cancel_timer(id);  // on the loop: erases it, or finds it fired already
}

uint64_t start_watch(EventLoop& loop, int fd, uint32_t interest, std::coroutine_handle<> h,
                     uint32_t* fired) {
    net::Loop& l = net_loop(loop);
    auto id = std::make_shared<net::Loop::WatchId>(0);
    // One-shot: the watch ends before the coroutine goes on (it may watch the fd again).
    *id = l.watch(fd, interest, [&l, id, h, fired](uint32_t events) {
        l.unwatch(*id);
        *fired = events;  // in the suspended frame, alive: a destroyed one unwatched first
        h.resume();
    });
    return *id;
}

void stop_watch(EventLoop& loop, uint64_t id) {
    net_loop(loop).unwatch(id);
}

namespace {

// A job's result on its way back to its loop. Dropped unrun, because the loop had stopped (a job
// that ran through the shutdown), it still ends the cancelled handler that waited for it alone.
// Idempotent through the shared Work, whatever std::function does with copies.
struct WorkReturn {
    explicit WorkReturn(std::shared_ptr<Work> w) : work(std::move(w)) {}
    // Moves leave nothing to end; std::function wants a copy constructor, and never copies.
    WorkReturn(WorkReturn&&) noexcept = default;
    WorkReturn(const WorkReturn&) = default;

    void operator()() {
        std::shared_ptr<Work> w = std::move(work);
        w->ticket = 0;  // out of the queue for good
        // Resume, unless the awaiter is gone; a handler cancelled while the job ran is
        // destroyed only now (its frame may be what the job was reading).
        if (w->abandoned) return;
        RootState* root = w->root;
        if (root && root->doomed) return root->on_work_ended_after_cancel();
        if (root) root->work = nullptr;
        w->waiter.resume();
    }
    ~WorkReturn() {
        if (!work || work->abandoned) return;
        RootState* root = std::exchange(work->root, nullptr);
        if (root && root->doomed) root->on_work_ended_after_cancel();
    }

    std::shared_ptr<Work> work;
};

}  // namespace

bool submit_work(EventLoop& loop, std::shared_ptr<Work> work) {
    auto& s = LoopAccess::services(loop);
    if (!s.pool) return false;
    net::Loop* l = s.loop;
    Work& w = *work;
    w.ticket = s.pool->try_submit([work = std::move(work), l]() mutable {
        work->run();
        l->post(WorkReturn(std::move(work)));
    });
    return w.ticket != app::WorkerPool::kRefused;
}

bool withdraw_work(Work& work) noexcept {
    EventLoop* loop = EventLoop::current();
    if (!loop || !work.ticket) return false;
    auto& s = LoopAccess::services(*loop);
    if (!s.pool || !s.pool->withdraw(work.ticket)) return false;
    work.ticket = 0;
    return true;
}

void throw_pool_full(EventLoop& loop) {
    unsigned retry = LoopAccess::services(loop).retry_after_s;
    throw HttpError(503, "Service Unavailable: the worker pool's queue is full")
        .header("Retry-After", std::to_string(retry));
}

}  // namespace detail

namespace app {

EventLoops::EventLoops(std::vector<net::Loop*> loops, WorkerPool* pool, unsigned retry_after_s) {
    for (unsigned i = 0; i < loops.size(); ++i) {
        services_.push_back(
            std::make_unique<LoopServices>(LoopServices{loops[i], pool, retry_after_s}));
        loops_.push_back(detail::LoopAccess::make(services_.back().get(), i));
        loops[i]->set_user_data(loops_.back().get());
    }
}

EventLoops::~EventLoops() {
    // The loops have ended, and the pool with them. What was posted to them since (the results
    // of jobs that ran through the shutdown) is dropped first, and spawned tasks left (spawned
    // during the drain) next, while the EventLoops their awaiters name still exist.
    for (auto& s : services_) s->loop->drop_posted();
    for (auto& s : services_) s->spawned->cancel_all();
    for (auto& s : services_) detail::detach_fd_watches(*s);
    for (auto& s : services_) s->loop->set_user_data(nullptr);
}

void EventLoops::cancel_spawned() {
    for (auto& s : services_) {
        SpawnedTasks* tasks = s->spawned.get();
        s->loop->post([tasks] { tasks->cancel_all(); });
    }
}

}  // namespace app

}  // namespace rivet
