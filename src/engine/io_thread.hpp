// IoThread: one I/O loop with its own listening socket (SO_REUSEPORT; several when it inherited
// more sockets than there are loops), its connections, its receive buffer and its Date cache. A
// connection is born, served and closed on one IoThread, so nothing on the request path is shared
// with other threads.
#pragma once

#include <sys/socket.h>

#include <array>
#include <atomic>
#include <cstdint>
#include <functional>
#include <memory>
#include <span>
#include <string>
#include <thread>
#include <vector>

#include "engine/body_budget.hpp"
#include "engine/exchange.hpp"
#include "engine/loop_stats.hpp"
#include "engine/server_config.hpp"
#include "engine/session.hpp"
#include "engine/stream.hpp"
#include "http/response_writer.hpp"
#include "net/loop.hpp"

namespace rivet::engine {

class Connection;

class IoThread final {
public:
    // The loop owns `listen_fds` and accepts from each. None: a loop without a listener serves
    // only what adopt() hands it (tests drive connections over socketpairs that way). `budget`:
    // the server's, shared by its loops and outliving them; null: the loop has one of its own
    // (limits.max_buffered_bodies). `tls_listen_fds`: listeners whose connections are TLS
    // (config.tls is their context).
    IoThread(unsigned index, const ServerConfig& config, Application& app,
             std::vector<int> listen_fds, BodyBudget* budget = nullptr,
             std::vector<int> tls_listen_fds = {});
    ~IoThread();

    void start();  // runs the loop on a new thread
    void join();
    // Graceful stop, from any thread: stop accepting, finish what is in flight (up to the drain
    // timeout), close idle connections, then end the loop.
    void begin_drain();
    // From any thread: keep accepting and serving, but end every connection after its next
    // answer (Server::begin_lame_duck).
    void begin_lame_duck();
    // From any thread: as begin_lame_duck, and stop listening now (another process accepts
    // from the same sockets: Server::begin_handover).
    void begin_handover();
    // From any thread: new limits and timeouts (not the address or thread count), applied on
    // this loop's thread between two events; connections use them from their next step on.
    void reconfigure(const ServerConfig& config);
    // Before start(): `fn` runs on this loop's tick too (the server's process-wide
    // housekeeping, which one loop does for all).
    void add_housekeeping(std::function<void()> fn) { housekeeping_ = std::move(fn); }
    // Serves an already-connected, non-blocking socket as a new connection; on this loop's
    // thread (loop().post from elsewhere). The one way connections are born: accepting uses it.
    // `tls`: the connection starts with a TLS handshake (config().tls must be set).
    void adopt(int fd, const sockaddr_storage& peer, bool tls = false);

    // --- used by connections, on this thread ---
    net::Loop& loop() { return loop_; }
    const ServerConfig& config() const { return config_; }
    const http::ParserLimits& parser_limits() const { return parser_limits_; }
    Application& app() { return app_; }
    unsigned index() const { return index_; }
    std::string_view date_block() { return dates_.block(loop_.wall_seconds()); }
    bool draining() const { return draining_; }
    // Lame duck or draining: answers say "Connection: close".
    bool winding_down() const { return draining_ || lame_duck_.load(std::memory_order_acquire); }
    LoopStats& stats() { return stats_; }
    BodyBudget& budget() { return *budget_; }
    // A connection whose body waits for the budget (Phase::BodyWait): admitted in order as
    // bytes are given back, by a task of this loop.
    void wait_for_budget(Connection& c);
    // Runs c.kicked() from a task of this loop, if c is still open then.
    void kick(Connection& c);
    // A stream's waker (stream.cpp): resumes the stream on connection (fd, id), if still open.
    void resume_stream(int fd, uint64_t connection_id, const StreamLink* link);

    // Shared scratch space: safe because a loop serves one connection at a time.
    char* read_buffer() { return read_buffer_.get(); }
    static constexpr size_t kReadBufferSize = 64 * 1024;
    std::string& write_buffer() { return write_buffer_; }
    // TLS connections' ciphertext: what one read took from a socket (also a file piece on its
    // way into records), and the records one write makes. Allocated with the first use.
    char* tls_read_buffer();
    std::string& tls_write_buffer() { return tls_write_buffer_; }
    std::span<http::Header> header_storage() { return headers_; }

    void connection_closed(Connection* c);
    // A session a connection let go of (handed off, or resting) while it may still be on the
    // stack: freed at the end of the turn.
    void retire(std::unique_ptr<Session> session) {
        retired_sessions_.push_back(std::move(session));
    }
    // Delivers a deferred response (runs on this thread): posted from another thread, or in
    // place when completed on this one outside any connection's event.
    void deliver(int fd, uint64_t connection_id, uint64_t sequence, Reply&& reply);

    // Marks a connection's event in progress (its handlers may be on the stack): an answer
    // completed meanwhile on this thread is posted, never delivered into the middle of it.
    class ConnectionEvent {
    public:
        explicit ConnectionEvent(IoThread& t) : t_(t) { ++t_.connection_events_; }
        ~ConnectionEvent() { --t_.connection_events_; }
        ConnectionEvent(const ConnectionEvent&) = delete;
        ConnectionEvent& operator=(const ConnectionEvent&) = delete;

    private:
        IoThread& t_;
    };
    // On this loop's thread, outside every connection's event: a deferred answer can be
    // delivered at once, saving a trip through the loop's task queue.
    bool can_deliver_in_place() const {
        // The thread first: the count is this loop thread's own, read by no other.
        return loop_.on_loop_thread() && connection_events_ == 0;
    }

private:
    // One listening socket; wakes its loop when connections wait there.
    struct Listener final : net::IoHandler {
        IoThread* owner = nullptr;
        int fd = -1;
        bool tls = false;  // its connections start with a TLS handshake
        void on_io(uint32_t events) override;
    };
    void accept_pending();  // from every listener
    void close_listeners();
    void accept_pending(const Listener& l);
    void set_accepting(bool on);
    void pause_for_descriptors();
    void end_descriptor_pause();
    void finish_drain_if_done();
    void admit_waiting_bodies();
    Connection* find(int fd, uint64_t id) const;

    unsigned index_;
    ServerConfig config_;  // this loop's copy: reconfigure() replaces it on this thread
    Application& app_;
    net::Loop loop_;
    std::vector<Listener> listeners_;  // fixed at construction (the loop holds their addresses)
    std::thread thread_;
    http::DateCache dates_;
    LoopStats stats_;
    std::unique_ptr<BodyBudget> own_budget_;
    BodyBudget* budget_;
    struct Waiting {
        int fd;
        uint64_t id;
    };
    std::vector<Waiting> body_waiting_;  // Phase::BodyWait connections, first come first served

    std::unique_ptr<char[]> read_buffer_;
    std::string write_buffer_;
    std::unique_ptr<char[]> tls_read_buffer_;
    std::string tls_write_buffer_;
    std::vector<http::Header> headers_;
    http::ParserLimits parser_limits_;  // config_.limits as the parser takes them

    std::vector<Connection*> by_fd_;      // live connections, indexed by fd
    std::vector<Connection*> graveyard_;  // closed this turn, deleted at its end
    std::vector<std::unique_ptr<Session>> retired_sessions_;  // retire(): freed at the turn's end
    size_t open_ = 0;
    unsigned connection_events_ = 0;  // ConnectionEvents on the stack now
    size_t max_open_;
    uint64_t next_connection_id_ = 1;
    bool accepting_ = true;
    bool draining_ = false;
    // Set from any thread at once, not by a task posted to the loop: a posted task runs at the
    // end of the loop's turn, after the turn's events, so a request arriving with the wake-up
    // would be answered as before the lame duck (seen under load: a new connection's answer
    // without "Connection: close" after /healthz had already said 503).
    std::atomic<bool> lame_duck_{false};
    // A pause for want of descriptors, from its first failed accept until the backlog empties.
    struct DescriptorShortage {
        uint64_t since_ms = 0;  // 0: none now
        uint64_t retries = 0;   // accepts that failed again after the first
    } shortage_;

    // Re-enables accepting after the process ran out of descriptors.
    struct AcceptRetry final : net::Timer {
        IoThread* owner = nullptr;
        void on_timeout() override;
    } accept_retry_;

    // Application::on_tick and the housekeeping, every kTickMs while the loop runs.
    static constexpr uint64_t kTickMs = 1000;
    std::function<void()> housekeeping_;
    struct Tick final : net::Timer {
        IoThread* owner = nullptr;
        void on_timeout() override;
    } tick_;

    // Fires when the drain timeout runs out.
    struct DrainTimer final : net::Timer {
        IoThread* owner = nullptr;
        void on_timeout() override;
    } drain_timer_;
};

}  // namespace rivet::engine
