// Server: the I/O threads of one listening address, started and drained together.
#pragma once

#include <atomic>
#include <cstdint>
#include <functional>
#include <memory>
#include <vector>

#include "engine/body_budget.hpp"
#include "engine/exchange.hpp"
#include "engine/heap_trim.hpp"
#include "engine/loop_stats.hpp"
#include "engine/server_config.hpp"
#include "net/loop.hpp"

namespace rivet::engine {

class IoThread;

class Server {
public:
    // Opens the listening sockets (one per thread), or serves config.listen_fds; throws
    // std::runtime_error when it cannot.
    Server(ServerConfig config, Application& app);
    ~Server();

    uint16_t port() const { return port_; }          // the bound port (useful with port 0)
    uint16_t tls_port() const { return tls_port_; }  // the TLS listeners' port; 0: none
    // The bound address: config.host, or the inherited sockets' ("127.0.0.1", "::").
    const std::string& host() const { return config_.host; }
    // Every listening socket, to hand over to a new process (an in-place upgrade). Valid until
    // drain() starts: the loops close them then.
    const std::vector<int>& listening_fds() const { return listen_fds_; }
    const std::vector<int>& tls_listening_fds() const { return tls_listen_fds_; }
    unsigned threads() const { return unsigned(threads_.size()); }

    void start();  // the loops run on their own threads
    void wait();   // until every loop has ended (after drain())
    void drain();  // graceful stop, from any thread (signal handlers: use a self-pipe instead)
    // The lame-duck period before a drain, from any thread: everything is still accepted and
    // served, but every answer says "Connection: close" (IoThread::winding_down()).
    void begin_lame_duck();
    // From any thread, once another process serves these listening sockets too (an in-place
    // upgrade): stop accepting at once, and end each open connection after its next answer.
    void begin_handover();

    // Runs `task` on loop `loop` (0 .. threads-1), from any thread; dropped unrun once the loops
    // have ended.
    void post(unsigned loop, std::function<void()> task);

    ServerStats stats() const;
    // Loop `i`'s event loop, for the services above (post, timers, watches).
    net::Loop& loop(unsigned i);
    // New limits and timeouts for every loop (host, port and threads stay as they are).
    void reconfigure(const ServerConfig& config);

private:
    std::vector<int> open_listeners(uint16_t wanted, const std::vector<int>& inherited,
                                    uint16_t& port);

    ServerConfig config_;
    Application& app_;
    uint16_t port_ = 0;
    std::vector<int> listen_fds_;
    uint16_t tls_port_ = 0;
    std::vector<int> tls_listen_fds_;
    BodyBudget budget_;   // before threads_: the loops use it until they are destroyed
    HeapTrim heap_trim_;  // on loop 0's tick; before threads_, which use it until destroyed
    std::vector<std::unique_ptr<IoThread>> threads_;
};

}  // namespace rivet::engine
