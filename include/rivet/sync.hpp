// Coordination between coroutines of one loop: Semaphore, Event, Channel.
//
//   rivet::Semaphore slots(4, /*max_waiters=*/64);           // e.g. a pool of 4 connections
//   auto permit = co_await slots.acquire();                  // QueueFull (503) past 64 waiting
//   ...                                                      // released when `permit` goes
//
//   rivet::Channel<std::string> jobs(100);
//   co_await jobs.send("x");  auto job = co_await jobs.receive();   // nullopt once closed
//
// Each object belongs to one I/O loop: use it from coroutines (and code) of that loop only;
// other threads reach it through EventLoop::post. A waiter resumes on a later turn of the loop,
// never inside the call that woke it, so set(), send() or a permit's release never run another
// coroutine on their own stack. A cancelled waiter (rivet/async.hpp) leaves the queue, and what
// it was handed but never got to use (a permit, a wake-up) goes to the next one. Destroy an
// object only when nobody waits on it.
#pragma once

#include <cstddef>
#include <deque>
#include <functional>
#include <limits>
#include <list>
#include <memory>
#include <optional>
#include <stdexcept>
#include <string>
#include <utility>

#include <rivet/completion.hpp>
#include <rivet/http_error.hpp>
#include <rivet/task.hpp>

namespace rivet {

// A bounded wait queue was full. An HttpError: a handler that lets it through answers 503.
class QueueFull : public HttpError {
public:
    explicit QueueFull(std::string what = "Service Unavailable: too many waiting")
        : HttpError(503, std::move(what)) {
        header("Retry-After", "1");
    }
};

// Channel::send after close().
class ChannelClosed : public std::logic_error {
public:
    ChannelClosed() : std::logic_error("rivet::Channel: send on a closed channel") {}
};

namespace detail {

// Coroutines waiting for a wake-up, in order.
class WaitQueue {
public:
    // Suspends until woken. `on_lost` runs if the waiter is cancelled after it was woken but
    // before it resumed: the wake-up is the caller's to pass on.
    Task<> wait(std::function<void()> on_lost) {
        co_await until_complete<>([this, lost = std::move(on_lost)](Completion<> c) mutable {
            auto node = std::make_shared<Node>(Node{c, {}, true});
            node->at = waiters_.insert(waiters_.end(), node);
            c.on_cancel([this, node, lost = std::move(lost)] {
                if (node->queued)
                    waiters_.erase(node->at);
                else if (lost)
                    lost();
            });
        });
    }
    bool wake_one() {
        if (waiters_.empty()) return false;
        auto node = std::move(waiters_.front());
        waiters_.pop_front();
        node->queued = false;
        node->wake.done();
        return true;
    }
    void wake_all() {
        while (wake_one()) {
        }
    }
    size_t size() const { return waiters_.size(); }

private:
    struct Node {
        Completion<> wake;
        std::list<std::shared_ptr<Node>>::iterator at;
        bool queued;
    };
    std::list<std::shared_ptr<Node>> waiters_;
};

}  // namespace detail

class Semaphore {
public:
    // Held while it lives; releases its permit when destroyed (or moved from and reset()).
    class Permit {
    public:
        Permit(Permit&& o) noexcept : owner_(std::exchange(o.owner_, nullptr)) {}
        Permit& operator=(Permit&& o) noexcept {
            if (this != &o) {
                reset();
                owner_ = std::exchange(o.owner_, nullptr);
            }
            return *this;
        }
        ~Permit() { reset(); }
        void reset() {
            if (owner_) std::exchange(owner_, nullptr)->release();
        }

    private:
        friend class Semaphore;
        explicit Permit(Semaphore* owner) : owner_(owner) {}
        Semaphore* owner_;
    };

    explicit Semaphore(size_t permits, size_t max_waiters = std::numeric_limits<size_t>::max())
        : available_(permits), max_waiters_(max_waiters) {}
    Semaphore(const Semaphore&) = delete;
    Semaphore& operator=(const Semaphore&) = delete;

    // A permit now, or once one is released (first come, first served). Throws QueueFull when
    // max_waiters coroutines already wait.
    Task<Permit> acquire() {
        if (available_ > 0) {
            --available_;
            co_return Permit(this);
        }
        if (queue_.size() >= max_waiters_) throw QueueFull();
        co_await queue_.wait([this] { release(); });  // a cancelled waiter passes its permit on
        co_return Permit(this);
    }
    std::optional<Permit> try_acquire() {
        if (available_ == 0) return std::nullopt;
        --available_;
        return Permit(this);
    }
    size_t available() const { return available_; }
    size_t waiting() const { return queue_.size(); }

private:
    void release() {
        if (!queue_.wake_one()) ++available_;  // else handed straight to the first waiter
    }
    size_t available_;
    size_t max_waiters_;
    detail::WaitQueue queue_;
};

// A flag coroutines can wait for: set() wakes every waiter, and later waits pass until reset().
class Event {
public:
    void set() {
        set_ = true;
        queue_.wake_all();
    }
    void reset() { set_ = false; }
    bool is_set() const { return set_; }
    Task<> wait() {
        if (set_) co_return;
        co_await queue_.wait(nullptr);
    }
    size_t waiting() const { return queue_.size(); }

private:
    bool set_ = false;
    detail::WaitQueue queue_;
};

// A bounded first-in first-out queue between coroutines: send() waits while it is full,
// receive() while it is empty. After close(), receive() drains what is left then gives
// std::nullopt, and send() throws ChannelClosed.
template <class T>
class Channel {
public:
    explicit Channel(size_t capacity) : capacity_(capacity) {
        if (capacity == 0) throw std::invalid_argument("rivet::Channel: capacity must be > 0");
    }
    Channel(const Channel&) = delete;
    Channel& operator=(const Channel&) = delete;

    Task<> send(T value) {
        for (;;) {
            if (closed_) throw ChannelClosed();
            if (items_.size() < capacity_) {
                items_.push_back(std::move(value));
                receivers_.wake_one();
                co_return;
            }
            co_await senders_.wait([this] { senders_.wake_one(); });
        }
    }
    // false when full (or closed: then the value is dropped).
    bool try_send(T value) {
        if (closed_ || items_.size() >= capacity_) return false;
        items_.push_back(std::move(value));
        receivers_.wake_one();
        return true;
    }
    Task<std::optional<T>> receive() {
        for (;;) {
            if (auto item = try_receive()) co_return item;
            if (closed_) co_return std::nullopt;
            co_await receivers_.wait([this] { receivers_.wake_one(); });
        }
    }
    std::optional<T> try_receive() {
        if (items_.empty()) return std::nullopt;
        std::optional<T> item(std::move(items_.front()));
        items_.pop_front();
        senders_.wake_one();
        return item;
    }
    void close() {
        closed_ = true;
        receivers_.wake_all();
        senders_.wake_all();
    }
    bool closed() const { return closed_; }
    size_t size() const { return items_.size(); }

private:
    size_t capacity_;
    bool closed_ = false;
    std::deque<T> items_;
    detail::WaitQueue receivers_, senders_;
};

}  // namespace rivet
