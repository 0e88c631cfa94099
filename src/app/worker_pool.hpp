// WorkerPool: threads for CPU-heavy handlers, so that the I/O loops never block on them.
// The queue is bounded: jobs beyond the ones the workers are running may wait up to
// `max_queue`; past that try_submit refuses and the caller answers 503. Idle workers count as
// room, so a burst no larger than the idle pool is never refused.
#pragma once

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

    bool try_submit(Job job);  // false when the queue is full or the pool is stopping
    void stop();               // finishes the queued jobs, then joins; idempotent

    size_t queued() const;  // waiting for a worker (not counting the ones running)
    unsigned workers() const { return unsigned(threads_.size()); }

private:
    void work();

    mutable std::mutex mutex_;
    std::condition_variable ready_;
    std::deque<Job> queue_;
    size_t max_queue_;
    size_t running_ = 0;  // jobs a worker has taken and not finished
    bool stopping_ = false;
    std::vector<std::thread> threads_;
};

}  // namespace rivet::app
