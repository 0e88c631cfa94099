// rivet::FdWatch (rivet/fd_watch.hpp): a net::Loop watch kept for the descriptor's life, whose
// interest is changed only when it must be. Each state is known to its loop's services, so that
// one outliving the loops (a pool destroyed after the app stopped) closes without touching them.
#include <rivet/fd_watch.hpp>

#include "app/async/loop_services.hpp"
#include "net/loop.hpp"

namespace rivet::detail {

struct FdWatchState {
    app::LoopServices* services;  // null once the loops are gone
    int fd;
    net::Loop::WatchId id = 0;
    bool registered = false;  // removed after a hang-up with nobody waiting
    uint32_t interest = 0;    // what epoll is asked for now
    std::coroutine_handle<> waiter;
    uint32_t want = 0;
    uint32_t* fired = nullptr;
    bool stirred = false;
};

namespace {

net::Loop& loop_of(FdWatchState* s) {
    return *s->services->loop;
}

void on_event(FdWatchState* s, uint32_t events) {
    if (s->waiter && (events & (s->want | net::kHangup))) {
        *s->fired = events;
        s->fired = nullptr;
        std::exchange(s->waiter, {}).resume();
        return;
    }
    if (s->waiter) return;        // a direction nobody asked for (the interest was just narrowed)
    s->stirred = true;            // ready while nobody waits: stop asking until the next wait
    if (events & net::kHangup) {  // reported whatever the interest: leave epoll for now
        loop_of(s).unwatch(s->id);
        s->registered = false;
    } else if (s->interest != 0) {
        loop_of(s).rewatch(s->id, 0);
        s->interest = 0;
    }
}

void register_watch(FdWatchState* s, uint32_t interest) {
    s->id = loop_of(s).watch(s->fd, interest, [s](uint32_t events) { on_event(s, events); });
    s->registered = true;
    s->interest = interest;
}

}  // namespace

FdWatchState* open_fd_watch(EventLoop& loop, int fd) {
    auto& services = LoopAccess::services(loop);
    auto* s = new FdWatchState{&services, fd};
    try {
        register_watch(s, 0);
    } catch (...) {
        delete s;
        throw;
    }
    services.fd_watches.insert(s);
    return s;
}

void close_fd_watch(FdWatchState* s) noexcept {
    if (s->services) {
        if (s->registered) loop_of(s).unwatch(s->id);
        s->services->fd_watches.erase(s);
    }
    delete s;
}

void arm_fd_watch(FdWatchState* s, uint32_t interest, std::coroutine_handle<> h, uint32_t* fired) {
    if (!s->registered)
        register_watch(s, interest);
    else if (s->interest != interest) {
        loop_of(s).rewatch(s->id, interest);
        s->interest = interest;
    }
    s->waiter = h;
    s->want = interest;
    s->fired = fired;
}

void disarm_fd_watch(FdWatchState* s) noexcept {
    s->waiter = {};
    s->fired = nullptr;
}

bool fd_watch_stirred(const FdWatchState* s) noexcept {
    return s->stirred;
}

void clear_fd_watch_stirred(FdWatchState* s) noexcept {
    s->stirred = false;
}

void detach_fd_watches(app::LoopServices& services) {
    for (FdWatchState* s : services.fd_watches) s->services = nullptr;
    services.fd_watches.clear();
}

}  // namespace rivet::detail
