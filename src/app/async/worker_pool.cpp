#include "app/async/worker_pool.hpp"

#include "net/available_cpus.hpp"

namespace rivet::app {

WorkerPool::WorkerPool(unsigned workers, size_t max_queue) : max_queue_(max_queue) {
    if (workers == 0) workers = net::available_cpus();
    for (unsigned i = 0; i < workers; ++i) threads_.emplace_back([this] { work(); });
}

WorkerPool::~WorkerPool() {
    stop();
}

WorkerPool::Ticket WorkerPool::try_submit(Job job, Priority priority) {
    const auto level = static_cast<size_t>(priority);
    if (level >= kLevels) return kRefused;
    const size_t bound = priority == Priority::High ? max_queue_ + high_headroom() : max_queue_;
    Ticket ticket;
    {
        std::lock_guard lock(mutex_);
        // Jobs submitted but not yet taken by an idle worker do not count against the queue:
        // with this one, the jobs that would wait for a worker must stay within the bound (so a
        // bound of 0 still lets every idle worker take one).
        size_t idle = threads_.size() - running_;
        size_t would_wait = waiting_ + 1 > idle ? waiting_ + 1 - idle : 0;
        if (stopping_ || would_wait > bound) return kRefused;
        ticket = ++last_ticket_;
        queues_[level].push_back({ticket, std::move(job)});
        ++waiting_;
    }
    ready_.notify_one();
    return ticket;
}

bool WorkerPool::withdraw(Ticket ticket) {
    if (ticket == kRefused) return false;
    Job gone;  // destroyed after the lock is released: it may own much
    {
        std::lock_guard lock(mutex_);
        for (auto& queue : queues_) {
            // Tickets ascend within a queue: a binary search finds it among thousands.
            auto it = std::lower_bound(queue.begin(), queue.end(), ticket,
                                       [](const Queued& q, Ticket t) { return q.ticket < t; });
            if (it == queue.end() || it->ticket != ticket) continue;
            gone = std::move(it->job);
            queue.erase(it);
            --waiting_;
            return true;
        }
    }
    return false;
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
    return waiting_;
}

void WorkerPool::work() {
    for (;;) {
        Job job;
        {
            std::unique_lock lock(mutex_);
            ready_.wait(lock, [this] { return stopping_ || waiting_ != 0; });
            if (waiting_ == 0) return;  // stopping, and nothing left to finish
            auto& queue = *std::find_if(queues_.rbegin(), queues_.rend(),
                                        [](const std::deque<Queued>& q) { return !q.empty(); });
            job = std::move(queue.front().job);
            queue.pop_front();
            --waiting_;
            ++running_;
        }
        job();  // jobs catch their own exceptions (App wraps handlers)
        std::lock_guard lock(mutex_);
        --running_;
    }
}

}  // namespace rivet::app
