// WorkerPool: threads for CPU-heavy handlers, so that the I/O loops never block on them.
// The queue is bounded: jobs beyond the ones the workers are running may wait up to
// `max_queue`; past that try_submit refuses and the caller answers 503. Idle workers count as
// room, so a burst no larger than the idle pool is never refused.
//
// Priorities (rivet/priority.hpp): a worker takes the oldest job of the highest level waiting.
// Normal and Low jobs are refused once max_queue wait, as before priorities existed; High ones
// may wait past it by high_headroom(), so a flood of lower jobs cannot refuse them.
#pragma once

#include <rivet/priority.hpp>

#include <array>

#include <algorithm>
#include <condition_variable>
#include <cstddef>
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

    // false when the queue is full (for `priority`, see above) or the pool is stopping.
    bool try_submit(Job job, Priority priority = Priority::Normal);
    void stop();  // finishes the queued jobs, then joins; idempotent

    size_t queued() const;  // waiting for a worker (not counting the ones running)
    unsigned workers() const { return unsigned(threads_.size()); }
    // How far past max_queue High jobs may still wait: a quarter of it, at least one.
    size_t high_headroom() const { return std::max<size_t>(1, max_queue_ / 4); }

private:
    void work();

    mutable std::mutex mutex_;
    std::condition_variable ready_;
    static constexpr size_t kLevels = 3;           // Priority::Low .. High
    std::array<std::deque<Job>, kLevels> queues_;  // indexed by Priority
    size_t waiting_ = 0;                           // jobs in all of queues_
    size_t max_queue_;
    size_t running_ = 0;  // jobs a worker has taken and not finished
    bool stopping_ = false;
    std::vector<std::thread> threads_;
};

}  // namespace rivet::app
