#include "net/loop.hpp"

#include "core/clock.hpp"
#include "net/socket_io.hpp"

#include <sys/epoll.h>
#include <sys/eventfd.h>
#include <time.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <system_error>

namespace rivet::net {

namespace {

uint32_t to_epoll(uint32_t interest) {
    // RDHUP (the peer shut its side) is level-triggered like EPOLLIN: asked for only with it, or
    // a connection that stopped reading would be woken for the same EOF forever.
    uint32_t ev = 0;
    if (interest & kReadable) ev |= EPOLLIN | EPOLLRDHUP;
    if (interest & kWritable) ev |= EPOLLOUT;
    return ev;
}

// The inbox's eventfd is registered with this tag instead of a handler.
IoHandler* const kWakeTag = nullptr;

thread_local Loop* t_current = nullptr;

}  // namespace

// A call_after() timer: owned by callback_timers_ until it fires or is cancelled.
struct Loop::CallbackTimer final : Timer {
    Loop* loop = nullptr;
    TimerId id = 0;
    Task fn;

    void on_timeout() override {
        // The map owns this object: take what is needed before erasing it.
        Task run = std::move(fn);
        Loop* l = loop;
        l->callback_timers_.erase(id);  // deletes this
        run();
    }
};

// A watch() registration. Stays allocated until the end of the turn it was unwatched in, since
// the current epoll batch may still name it.
struct Loop::FdWatch final : IoHandler {
    int fd = -1;
    bool active = true;
    std::function<void(uint32_t)> fn;

    void on_io(uint32_t events) override {
        if (active) fn(events);  // fn stays alive meanwhile: unwatch() only retires this
    }
};

Loop* Loop::current() {
    return t_current;
}

Loop::Loop() : timers_(core::monotonic_ms()), fine_timers_(timers_.now(), 1, 1024) {
    epfd_ = epoll_create1(EPOLL_CLOEXEC);
    if (epfd_ < 0) throw std::system_error(errno, std::generic_category(), "epoll_create1");
    wakefd_ = eventfd(0, EFD_NONBLOCK | EFD_CLOEXEC);
    if (wakefd_ < 0) throw std::system_error(errno, std::generic_category(), "eventfd");
    epoll_event ev{};
    ev.events = EPOLLIN;
    ev.data.ptr = kWakeTag;
    epoll_ctl(epfd_, EPOLL_CTL_ADD, wakefd_, &ev);
    read_clocks();
}

Loop::~Loop() {
    for (auto& [id, t] : callback_timers_) fine_timers_.cancel(*t);
    for (auto& [id, w] : watches_) remove(w->fd);
    drop_posted();
    if (wakefd_ >= 0) close(wakefd_);
    if (epfd_ >= 0) close(epfd_);
}

void Loop::drop_posted() {
    // Destroying a task may post again (a deferred answer that was never completed answers 500
    // by posting): each round takes the inbox out of the lock first, so that post() finds a
    // valid, unlocked inbox.
    for (;;) {
        std::vector<Task> left;
        {
            std::lock_guard lock(inbox_mutex_);
            left.swap(inbox_);
        }
        if (left.empty()) break;
    }
}

void Loop::add(int fd, uint32_t interest, IoHandler* handler) {
    epoll_event ev{};
    ev.events = to_epoll(interest);
    ev.data.ptr = handler;
    if (epoll_ctl(epfd_, EPOLL_CTL_ADD, fd, &ev) < 0)
        throw std::system_error(errno, std::generic_category(), "epoll_ctl(ADD)");
}

void Loop::modify(int fd, uint32_t interest, IoHandler* handler) {
    epoll_event ev{};
    ev.events = to_epoll(interest);
    ev.data.ptr = handler;
    epoll_ctl(epfd_, EPOLL_CTL_MOD, fd, &ev);
}

void Loop::remove(int fd) {
    epoll_ctl(epfd_, EPOLL_CTL_DEL, fd, nullptr);
}

void Loop::read_clocks() {
    now_ms_ = core::monotonic_ms();
    fine_clock_.anchor();
    timespec ts;
    clock_gettime(CLOCK_REALTIME_COARSE, &ts);
    wall_s_ = ts.tv_sec;
}

int Loop::next_timeout_ms() const {
    int coarse = timers_.next_timeout_ms(), fine = fine_timers_.next_timeout_ms();
    if (coarse < 0) return fine;
    if (fine < 0) return coarse;
    return std::min(coarse, fine);
}

void Loop::run() {
    running_ = true;
    Loop* outer = t_current;  // a loop run inside another's callback (tests) restores it
    t_current = this;
    struct Restore {
        Loop* outer;
        ~Restore() { t_current = outer; }
    } restore{outer};
    constexpr int kMaxEvents = 512;  // more readiness per epoll_wait when thousands are busy
    epoll_event events[kMaxEvents];
    while (running_) {
        int timeout = next_timeout_ms();
        int n = wait_events(epfd_, events, kMaxEvents, timeout);
        if (n < 0 && errno != EINTR)
            throw std::system_error(errno, std::generic_category(), "epoll_wait");
        read_clocks();
        // The wheel's clock moves before anything is scheduled this turn: a deadline set now
        // must count from now, not from before the sleep (a long-idle loop would otherwise
        // time out its first connection at once).
        timers_.advance(now_ms_);
        fine_timers_.advance(now_ms_);
        for (int i = 0; i < n; ++i) {
            auto* handler = static_cast<IoHandler*>(events[i].data.ptr);
            if (handler == kWakeTag) {
                uint64_t count;
                [[maybe_unused]] auto r = read(wakefd_, &count, sizeof count);
                continue;
            }
            uint32_t e = events[i].events, mask = 0;
            if (e & (EPOLLIN | EPOLLRDHUP)) mask |= kReadable;  // read() then tells EOF
            if (e & EPOLLOUT) mask |= kWritable;
            if (e & (EPOLLERR | EPOLLHUP)) mask |= kHangup;
            handler->on_io(mask);
        }
        drain_inbox();
        for (auto& hook : turn_end_hooks_) hook();
        retired_watches_.clear();
    }
}

Loop::TimerId Loop::call_after(uint64_t delay_ms, Task fn) {
    TimerId id = next_id_.fetch_add(1, std::memory_order_relaxed);
    if (on_loop_thread()) {
        arm(id, delay_ms, std::move(fn));
    } else {
        post([this, id, delay_ms, fn = std::move(fn)]() mutable {
            arm(id, delay_ms, std::move(fn));
        });
    }
    return id;
}

void Loop::arm(TimerId id, uint64_t delay_ms, Task fn) {
    // The wheel's clock is the turn's; a timer armed late in a long turn counts from the
    // clock now, and from where the fine clock may already be, so that it is never early by
    // either (sleep(50ms) timed with steady_clock must not read 46).
    uint64_t lag = core::monotonic_ms() - fine_timers_.now() + core::monotonic_ms_lag_bound();
    auto t = std::make_unique<CallbackTimer>();
    t->loop = this;
    t->id = id;
    t->fn = std::move(fn);
    fine_timers_.schedule(*t, delay_ms + lag);
    callback_timers_.emplace(id, std::move(t));
}

bool Loop::cancel_timer(TimerId id) {
    if (!on_loop_thread()) {
        post([this, id] { cancel_timer(id); });
        return false;
    }
    auto it = callback_timers_.find(id);
    if (it == callback_timers_.end()) return false;
    fine_timers_.cancel(*it->second);
    callback_timers_.erase(it);
    return true;
}

Loop::WatchId Loop::watch(int fd, uint32_t interest, std::function<void(uint32_t)> fn) {
    auto w = std::make_unique<FdWatch>();
    w->fd = fd;
    w->fn = std::move(fn);
    add(fd, interest, w.get());  // throws for a descriptor already registered (EEXIST)
    WatchId id = next_id_.fetch_add(1, std::memory_order_relaxed);
    watches_.emplace(id, std::move(w));
    return id;
}

void Loop::unwatch(WatchId id) {
    auto it = watches_.find(id);
    if (it == watches_.end()) return;
    FdWatch* w = it->second.get();
    w->active = false;
    remove(w->fd);
    retired_watches_.push_back(std::move(it->second));
    watches_.erase(it);
}

void Loop::rewatch(WatchId id, uint32_t interest) {
    auto it = watches_.find(id);
    if (it != watches_.end()) modify(it->second->fd, interest, it->second.get());
}

void Loop::stop() {
    post([this] { running_ = false; });
}

void Loop::post(Task task) {
    bool wake;
    {
        std::lock_guard lock(inbox_mutex_);
        inbox_.push_back(std::move(task));
        wake = !wake_pending_;
        wake_pending_ = true;
    }
    if (wake) {
        uint64_t one = 1;
        [[maybe_unused]] auto r = write(wakefd_, &one, sizeof one);
    }
}

void Loop::drain_inbox() {
    {
        std::lock_guard lock(inbox_mutex_);
        if (inbox_.empty()) return;
        draining_.swap(inbox_);
        wake_pending_ = false;
    }
    for (auto& task : draining_) task();
    draining_.clear();
}

}  // namespace rivet::net
