// WorkerPool: threads for CPU-heavy handlers, so that the I/O loops never block on them.
// The queue is bounded: jobs beyond the ones the workers are running may wait up to
// `max_queue`; past that try_submit refuses and the caller answers 503. Idle workers count as
// room, so a burst no larger than the idle pool is never refused.
//
// Priorities (rivet/priority.hpp): a worker takes the oldest job of the highest level waiting.
// Normal and Low jobs are refused once max_queue wait, as before priorities existed; High ones
// may wait past it by high_headroom(), so a flood of lower jobs cannot refuse them.
//
// A job whose request was cancelled (its client left) is withdrawn while it waits: its room in
// the queue is free at once and it never runs. One that a worker has taken runs to its end.
#pragma once

#include <rivet/priority.hpp>

#include <array>

#include <algorithm>
#include <condition_variable>
#include <cstddef>
#include <cstdint>
#include <deque>
#include <functional>
#include <mutex>
#include <thread>
#include <vector>

namespace rivet::app {

class WorkerPool {
public:
    using Job = std::function<void()>;

    WorkerPool(unsigned workers, size_t max_queue);
    ~WorkerPool();  // finishes the queued jobs, then joins

    // A queued job's name, for withdraw(); kRefused when the queue is full (for `priority`, see
    // above) or the pool is stopping.
    using Ticket = uint64_t;
    static constexpr Ticket kRefused = 0;
    Ticket try_submit(Job job, Priority priority = Priority::Normal);
    // Takes the job out of the queue if no worker has taken it: true when it will never run
    // (the job is destroyed here, on the caller's thread). False once it runs, ran, or for
    // kRefused.
    bool withdraw(Ticket ticket);
    void stop();  // finishes the queued jobs, then joins; idempotent

    size_t queued() const;  // waiting for a worker (not counting the ones running)
    unsigned workers() const { return unsigned(threads_.size()); }
    // How far past max_queue High jobs may still wait: a quarter of it, at least one.
    size_t high_headroom() const { return std::max<size_t>(1, max_queue_ / 4); }

private:
    void work();

    mutable std::mutex mutex_;
    std::condition_variable ready_;
    static constexpr size_t kLevels = 3;  // Priority::Low .. High
    struct Queued {
        Ticket ticket;
        Job job;
    };
    std::array<std::deque<Queued>, kLevels> queues_;  // indexed by Priority; tickets ascend
    size_t waiting_ = 0;                              // jobs in all of queues_
    size_t max_queue_;
    size_t running_ = 0;  // jobs a worker has taken and not finished
    Ticket last_ticket_ = kRefused;
    bool stopping_ = false;
    std::vector<std::thread> threads_;
};

}  // namespace rivet::app
