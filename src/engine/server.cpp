#include "engine/server.hpp"

#include <unistd.h>

#include <thread>

#include "engine/io_thread.hpp"
#include "net/socket.hpp"

namespace rivet::engine {

Server::Server(ServerConfig config, Application& app)
    : config_(std::move(config)), app_(app), budget_(config_.limits.max_buffered_bodies) {
    if (config_.threads == 0) config_.threads = std::max(1u, std::thread::hardware_concurrency());
    open_listeners();
    // Loop i accepts from sockets i, i + threads, ...: every socket has a loop (one closed
    // unaccepted would reset the connections queued on it), and each loop has one at least.
    std::vector<std::vector<int>> mine(config_.threads);
    for (size_t i = 0; i < listen_fds_.size(); ++i)
        mine[i % config_.threads].push_back(listen_fds_[i]);
    for (unsigned i = 0; i < config_.threads; ++i)
        threads_.push_back(std::make_unique<IoThread>(i, config_, app_, mine[i], &budget_));
}

void Server::open_listeners() {
    if (config_.listen_fds.empty()) {
        // One listening socket per loop, all on one port; that port must be nobody else's, or
        // SO_REUSEPORT would quietly split its traffic with another server.
        port_ = net::claim_port(config_.host, config_.port);
        for (unsigned i = 0; i < config_.threads; ++i)
            listen_fds_.push_back(net::listen_tcp(config_.host, port_, true));
        return;
    }
    // Inherited: the port is already ours. Loops beyond the inherited sockets get their own.
    listen_fds_ = config_.listen_fds;
    for (int fd : listen_fds_) net::adopt_listener(fd);
    config_.host = net::local_address(listen_fds_[0]);
    port_ = net::local_port(listen_fds_[0]);
    try {
        while (listen_fds_.size() < config_.threads)
            listen_fds_.push_back(net::listen_beside(listen_fds_[0]));
    } catch (...) {
        for (size_t i = config_.listen_fds.size(); i < listen_fds_.size(); ++i)
            close(listen_fds_[i]);
        throw;
    }
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
    s.body_bytes_held = budget_.held();
    return s;
}

}  // namespace rivet::engine
