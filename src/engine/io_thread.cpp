#include "engine/io_thread.hpp"

#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstdio>

#include "engine/connection.hpp"
#include "net/socket.hpp"

namespace rivet::engine {

IoThread::IoThread(unsigned index, const ServerConfig& config, Application& app,
                   std::vector<int> listen_fds, BodyBudget* budget, std::vector<int> tls_listen_fds)
    : index_(index),
      config_(config),
      app_(app),
      listeners_(listen_fds.size() + tls_listen_fds.size()),
      read_buffer_(new char[kReadBufferSize]),
      headers_(config.limits.max_headers),
      parser_limits_(engine::parser_limits(config.limits)) {
    if (!budget) {
        own_budget_ = std::make_unique<BodyBudget>(config.limits.max_buffered_bodies);
        budget = own_budget_.get();
    }
    budget_ = budget;
    budget_->add_waker(index_, [this] { loop_.post([this] { admit_waiting_bodies(); }); });
    unsigned threads = config.threads ? config.threads : 1;
    max_open_ = std::max<size_t>(1, config.limits.max_connections / threads);
    drain_timer_.owner = this;
    accept_retry_.owner = this;
    tick_.owner = this;
    loop_.timers().schedule(tick_, kTickMs);
    write_buffer_.reserve(64 * 1024);
    for (size_t i = 0; i < listeners_.size(); ++i) {
        listeners_[i].owner = this;
        listeners_[i].tls = i >= listen_fds.size();
        listeners_[i].fd =
            listeners_[i].tls ? tls_listen_fds[i - listen_fds.size()] : listen_fds[i];
        loop_.add(listeners_[i].fd, net::kReadable, &listeners_[i]);
    }
    loop_.on_turn_end([this] {
        // Before the connections they served; one by one, as a session's destructor could end
        // in another retire().
        while (!retired_sessions_.empty()) {
            std::unique_ptr<Session> gone = std::move(retired_sessions_.back());
            retired_sessions_.pop_back();
        }
        for (Connection* c : graveyard_) delete c;
        graveyard_.clear();
    });
}

IoThread::~IoThread() {
    budget_->remove_waker(index_);        // the loops have stopped: no give_back runs concurrently
    loop_.timers().cancel(drain_timer_);  // they are destroyed before the loop's wheel
    loop_.timers().cancel(accept_retry_);
    loop_.timers().cancel(tick_);
    retired_sessions_.clear();
    // Undrained connections (a loop that never ran): their sockets close with them.
    for (Connection* c : by_fd_) delete c;  // their transports close the sockets
    for (Connection* c : graveyard_) delete c;
    for (Listener& l : listeners_)
        if (l.fd >= 0) close(l.fd);
}

void IoThread::start() {
    thread_ = std::thread([this] { loop_.run(); });
}

void IoThread::join() {
    if (thread_.joinable()) thread_.join();
}

void IoThread::Listener::on_io(uint32_t) {
    owner->accept_pending(*this);
}

void IoThread::accept_pending() {
    for (const Listener& l : listeners_) accept_pending(l);
}

void IoThread::accept_pending(const Listener& l) {
    // A bounded batch per turn keeps one busy listener from starving the connections.
    for (int i = 0; i < 128 && accepting_ && l.fd >= 0; ++i) {
        net::PeerAddress peer;
        int fd = net::accept_connection(l.fd, &peer);
        if (fd < 0) {
            if (errno == EMFILE || errno == ENFILE)
                pause_for_descriptors();
            else if (shortage_.since_ms)
                end_descriptor_pause();  // all that waited is accepted: the shortage is over
            return;
        }
        adopt(fd, peer.addr, l.tls);
    }
}

// Out of descriptors: the kernel keeps the connection queued, and a level-triggered listener
// would wake us for it at once, so accepting pauses and a timer tries again. The pause is
// logged once, when it starts; every further failed try only counts, even when a try accepted
// a few before failing (descriptors hovering at the limit). It ends when a try has accepted
// everything that waited.
void IoThread::pause_for_descriptors() {
    if (!shortage_.since_ms) {
        shortage_ = {std::max<uint64_t>(loop_.now_ms(), 1), 0};
        std::fprintf(stderr, "rivet: loop %u: out of file descriptors; accepting paused\n", index_);
    } else {
        ++shortage_.retries;
    }
    set_accepting(false);
    // Descriptors may come back from anywhere in the process, not only from this loop's
    // connections: try again shortly.
    loop_.timers().schedule(accept_retry_, 100);
}

void IoThread::end_descriptor_pause() {
    std::fprintf(stderr,
                 "rivet: loop %u: accepting resumed after %.1f s out of file descriptors "
                 "(%llu retries failed)\n",
                 index_, double(loop_.now_ms() - shortage_.since_ms) / 1000.0,
                 static_cast<unsigned long long>(shortage_.retries));
    shortage_ = {};
}

char* IoThread::tls_read_buffer() {
    if (!tls_read_buffer_) tls_read_buffer_.reset(new char[kReadBufferSize]);
    return tls_read_buffer_.get();
}

void IoThread::adopt(int fd, const sockaddr_storage& peer, bool tls) {
    if (size_t(fd) >= by_fd_.size()) by_fd_.resize(size_t(fd) * 2 + 64, nullptr);
    Connection* c = new Connection(*this, fd, next_connection_id_++, peer, tls);
    by_fd_[fd] = c;
    ++open_;
    LoopStats::bump(stats_.accepted);
    stats_.open_connections.store(open_, std::memory_order_relaxed);
    if (open_ >= max_open_) set_accepting(false);
    c->start();  // may serve and close it at once (connection_closed)
}

void IoThread::set_accepting(bool on) {
    if (on == accepting_ || listeners_.empty() || listeners_[0].fd < 0) return;
    accepting_ = on;
    for (Listener& l : listeners_) loop_.modify(l.fd, on ? uint32_t(net::kReadable) : 0u, &l);
}

void IoThread::connection_closed(Connection* c) {
    by_fd_[c->fd()] = nullptr;
    --open_;
    stats_.open_connections.store(open_, std::memory_order_relaxed);
    graveyard_.push_back(c);  // freed at the end of the turn, when no frame still uses it
    if (draining_) return finish_drain_if_done();
    if (!accepting_ && open_ < max_open_) set_accepting(true);
}

Connection* IoThread::find(int fd, uint64_t id) const {
    if (fd < 0 || size_t(fd) >= by_fd_.size()) return nullptr;
    Connection* c = by_fd_[fd];
    return c && c->id() == id ? c : nullptr;
}

void IoThread::deliver(int fd, uint64_t connection_id, uint64_t sequence, Reply&& reply) {
    if (Connection* c = find(fd, connection_id)) c->complete(sequence, std::move(reply));
}

void IoThread::kick(Connection& c) {
    loop_.post([this, fd = c.fd(), id = c.id()] {
        if (Connection* found = find(fd, id)) found->kicked();
    });
}

void IoThread::resume_stream(int fd, uint64_t connection_id, const StreamLink* link) {
    if (Connection* c = find(fd, connection_id)) c->resume_stream(link);
}

void IoThread::wait_for_budget(Connection& c) {
    body_waiting_.push_back({c.fd(), c.id()});
    stats_.bodies_waiting.store(body_waiting_.size(), std::memory_order_relaxed);
    // Not from inside c's own read: a task looks at once (bytes may have come back meanwhile).
    loop_.post([this] { admit_waiting_bodies(); });
}

void IoThread::admit_waiting_bodies() {
    for (int pass = 0; pass < 2 && !body_waiting_.empty(); ++pass) {
        size_t done = 0;
        while (done < body_waiting_.size()) {
            auto [fd, id] = body_waiting_[done];
            Connection* c = find(fd, id);
            if (c && !c->admit_waiting_body()) break;  // the first in line still does not fit
            ++done;
        }
        body_waiting_.erase(body_waiting_.begin(), body_waiting_.begin() + long(done));
        // Marked before the second look: a give_back from here on wakes this loop, and one
        // before it left bytes that the second look sees.
        if (pass == 0 && !body_waiting_.empty()) budget_->want(index_);
    }
    stats_.bodies_waiting.store(body_waiting_.size(), std::memory_order_relaxed);
}

void IoThread::begin_drain() {
    loop_.post([this] {
        if (draining_) return;
        // Serve what the kernel already accepted for us, then stop listening.
        accept_pending();
        draining_ = true;
        close_listeners();
        for (Connection* c : by_fd_)
            if (c) c->close_when_idle();
        loop_.timers().schedule(drain_timer_, config_.timeouts.drain_ms);
        finish_drain_if_done();
    });
}

void IoThread::begin_lame_duck() {
    // Idle keep-alive connections stay open: closing one races the client's next request on it.
    // Each ends after its next answer instead, which the client is told.
    lame_duck_.store(true, std::memory_order_release);
}

void IoThread::begin_handover() {
    lame_duck_.store(true, std::memory_order_release);
    loop_.post([this] {
        // The queue is the sockets': what waits in it is the other process's to accept.
        close_listeners();
    });
}

void IoThread::close_listeners() {
    for (Listener& l : listeners_) {
        if (l.fd < 0) continue;
        loop_.remove(l.fd);
        close(l.fd);
        l.fd = -1;
    }
}

void IoThread::reconfigure(const ServerConfig& config) {
    loop_.post([this, config] {
        ServerConfig kept = std::move(config_);  // what belongs to the listener stays
        config_ = config;
        config_.host = std::move(kept.host);
        config_.port = kept.port;
        config_.threads = kept.threads;
        config_.proxy_protocol = kept.proxy_protocol;
        config_.proxy_trusted = std::move(kept.proxy_trusted);
        config_.listen_fds = std::move(kept.listen_fds);
        // New certificates (a reload) for new handshakes; TLS is not turned off by one.
        if (!config_.tls) config_.tls = std::move(kept.tls);
        config_.tls_port = kept.tls_port;
        config_.tls_listen_fds = std::move(kept.tls_listen_fds);
        headers_.resize(config_.limits.max_headers);  // no parse is in progress here
        budget_->set_limit(config_.limits.max_buffered_bodies);
        parser_limits_ = engine::parser_limits(config_.limits);
        max_open_ = std::max<size_t>(
            1, config_.limits.max_connections / (config_.threads ? config_.threads : 1));
        if (!draining_) set_accepting(open_ < max_open_);
    });
}

void IoThread::finish_drain_if_done() {
    if (open_ > 0) return;
    loop_.timers().cancel(drain_timer_);
    loop_.stop();
}

void IoThread::AcceptRetry::on_timeout() {
    if (owner->draining_ || owner->open_ >= owner->max_open_) return;
    owner->set_accepting(true);
}

void IoThread::Tick::on_timeout() {
    owner->app_.on_tick(owner->index_);
    if (owner->housekeeping_) owner->housekeeping_();
    owner->loop_.timers().schedule(*this, kTickMs);
}

void IoThread::DrainTimer::on_timeout() {
    // Whatever is still open after the drain timeout is cut off.
    for (Connection* c : owner->by_fd_)
        if (c) c->close_now();
    owner->finish_drain_if_done();
}

}  // namespace rivet::engine
