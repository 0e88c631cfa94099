#include "app/worker_pool.hpp"

namespace rivet::app {

WorkerPool::WorkerPool(unsigned workers, size_t max_queue) : max_queue_(max_queue) {
    if (workers == 0) workers = std::max(1u, std::thread::hardware_concurrency());
    for (unsigned i = 0; i < workers; ++i) threads_.emplace_back([this] { work(); });
}

WorkerPool::~WorkerPool() {
    stop();
}

bool WorkerPool::try_submit(Job job) {
    {
        std::lock_guard lock(mutex_);
        // Jobs submitted but not yet taken by an idle worker do not count against the queue.
        size_t idle = threads_.size() - running_;
        size_t waiting = queue_.size() > idle ? queue_.size() - idle : 0;
        if (stopping_ || waiting >= max_queue_) return false;
        queue_.push_back(std::move(job));
    }
    ready_.notify_one();
    return true;
}

void WorkerPool::stop() {
    {
        std::lock_guard lock(mutex_);
        stopping_ = true;
    }
    ready_.notify_all();
    for (auto& t : threads_)
        if (t.joinable()) t.join();
}

size_t WorkerPool::queued() const {
    std::lock_guard lock(mutex_);
    return queue_.size();
}

void WorkerPool::work() {
    for (;;) {
        Job job;
        {
            std::unique_lock lock(mutex_);
            ready_.wait(lock, [this] { return stopping_ || !queue_.empty(); });
            if (queue_.empty()) return;  // stopping, and nothing left to finish
            job = std::move(queue_.front());
            queue_.pop_front();
            ++running_;
        }
        job();  // jobs catch their own exceptions (App wraps handlers)
        std::lock_guard lock(mutex_);
        --running_;
    }
}

}  // namespace rivet::app
