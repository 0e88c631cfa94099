#include "engine/server.hpp"

#include <unistd.h>

#include <thread>

#include "engine/io_thread.hpp"
#include "net/available_cpus.hpp"
#include "net/socket.hpp"

namespace rivet::engine {

Server::Server(ServerConfig config, Application& app)
    : config_(std::move(config)), app_(app), budget_(config_.limits.max_buffered_bodies) {
    if (config_.threads == 0) config_.threads = net::available_cpus();
    const bool inherited = !config_.listen_fds.empty();
    listen_fds_ = open_listeners(config_.port, config_.listen_fds, port_);
    if (inherited) config_.host = net::local_address(listen_fds_[0]);
    if (config_.tls) {
        try {
            tls_listen_fds_ = open_listeners(config_.tls_port, config_.tls_listen_fds, tls_port_);
        } catch (...) {
            for (int fd : listen_fds_) close(fd);
            throw;
        }
    }
    // Loop i accepts from sockets i, i + threads, ...: every socket has a loop (one closed
    // unaccepted would reset the connections queued on it), and each loop has one at least.
    std::vector<std::vector<int>> mine(config_.threads), mine_tls(config_.threads);
    for (size_t i = 0; i < listen_fds_.size(); ++i)
        mine[i % config_.threads].push_back(listen_fds_[i]);
    for (size_t i = 0; i < tls_listen_fds_.size(); ++i)
        mine_tls[i % config_.threads].push_back(tls_listen_fds_[i]);
    for (unsigned i = 0; i < config_.threads; ++i)
        threads_.push_back(
            std::make_unique<IoThread>(i, config_, app_, mine[i], &budget_, mine_tls[i]));
    // Freed memory goes back to the system once traffic pauses (HeapTrim): bytes moved by
    // every loop say whether there was any since the last tick.
    threads_[0]->add_housekeeping([this] {
        uint64_t traffic = 0;
        for (auto& t : threads_) {
            auto& s = t->stats();
            traffic += s.bytes_in.load(std::memory_order_relaxed) +
                       s.bytes_out.load(std::memory_order_relaxed);
        }
        heap_trim_.tick(traffic);
    });
}

// The listening sockets of one port: one per loop, or the inherited ones (and more beside them
// for loops left without). `port` is set to the bound port.
std::vector<int> Server::open_listeners(uint16_t wanted, const std::vector<int>& inherited,
                                        uint16_t& port) {
    std::vector<int> fds;
    if (inherited.empty()) {
        // One listening socket per loop, all on one port; that port must be nobody else's, or
        // SO_REUSEPORT would quietly split its traffic with another server.
        port = net::claim_port(config_.host, wanted);
        try {
            for (unsigned i = 0; i < config_.threads; ++i)
                fds.push_back(net::listen_tcp(config_.host, port, true));
        } catch (...) {
            for (int fd : fds) close(fd);
            throw;
        }
        return fds;
    }
    // Inherited: the port is already ours. Loops beyond the inherited sockets get their own.
    fds = inherited;
    for (int fd : fds) net::adopt_listener(fd);
    port = net::local_port(fds[0]);
    try {
        while (fds.size() < config_.threads) fds.push_back(net::listen_beside(fds[0]));
    } catch (...) {
        for (size_t i = inherited.size(); i < fds.size(); ++i) close(fds[i]);
        throw;
    }
    return fds;
}

Server::~Server() {
    drain();
    wait();
}

net::Loop& Server::loop(unsigned i) {
    return threads_.at(i)->loop();
}

void Server::start() {
    for (auto& t : threads_) t->start();
}

void Server::wait() {
    for (auto& t : threads_) t->join();
}

void Server::drain() {
    for (auto& t : threads_) t->begin_drain();
}

void Server::begin_lame_duck() {
    for (auto& t : threads_) t->begin_lame_duck();
}

void Server::begin_handover() {
    for (auto& t : threads_) t->begin_handover();
}

void Server::post(unsigned loop, std::function<void()> task) {
    threads_.at(loop)->loop().post(std::move(task));
}

void Server::reconfigure(const ServerConfig& config) {
    for (auto& t : threads_) t->reconfigure(config);
}

ServerStats Server::stats() const {
    ServerStats s;
    for (auto& t : threads_) s += t->stats().read();
    // Two reads of counters that move: the difference saturates rather than wraps.
    const uint64_t held = budget_.held(), output = budget_.output_held();
    s.unsent_bytes_held = output;
    s.body_bytes_held = held > output ? held - output : 0;
    return s;
}

}  // namespace rivet::engine
