#include "engine/server.hpp"

#include <thread>

#include "engine/io_thread.hpp"
#include "net/socket.hpp"

namespace rivet::engine {

Server::Server(ServerConfig config, Application& app)
    : config_(std::move(config)), app_(app), budget_(config_.limits.max_buffered_bodies) {
    if (config_.threads == 0) config_.threads = std::max(1u, std::thread::hardware_concurrency());
    // One listening socket per loop, all on one port; that port must be nobody else's, or
    // SO_REUSEPORT would quietly split its traffic with another server.
    port_ = net::claim_port(config_.host, config_.port);
    for (unsigned i = 0; i < config_.threads; ++i) {
        int fd = net::listen_tcp(config_.host, port_, true);
        threads_.push_back(std::make_unique<IoThread>(i, config_, app_, fd, &budget_));
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
