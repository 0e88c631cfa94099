// Connection: one accepted socket, from the accept to the close. It owns the transport (plain TCP
// or TLS), the loop registration, the one timer and the peer's address, and runs one protocol
// session at a time over them (session.hpp). Before the session it may read a trusted proxy's
// PROXY header (before the transport's first byte, so on TLS listeners too) and run the TLS
// handshake; what the session speaks is chosen when those are done (by ALPN on TLS: HTTP/2 or
// HTTP/1.1; HTTP/1.1 on plain TCP, which hands over to HTTP/2 when the preface comes).
#pragma once

#include <sys/socket.h>

#include <cstdint>
#include <memory>
#include <string>

#include "engine/exchange.hpp"
#include "engine/session.hpp"
#include "engine/transport.hpp"
#include "net/loop.hpp"
#include "net/timer_wheel.hpp"

namespace rivet::engine {

class IoThread;
class TlsTransport;

class Connection final : public net::IoHandler, public net::Timer {
public:
    enum class Stage : uint8_t {
        // A trusted proxy may send a PROXY protocol header first (connection_proxy.cpp): read
        // raw, before the transport's first byte. Timed as a request head, from the accept.
        ProxyHeader,
        // Accepted on a TLS listener: the transport's handshake, timed from the accept. Bytes
        // that are not TLS end it (plain HTTP gets a plain-HTTP 400).
        Handshake,
        Session,  // session() speaks
        // Between two HTTP/1.1 requests on a keep-alive connection, with nothing read or owed:
        // no session is held (idle connections are most of a busy server's, and a session is
        // twice the size of the rest), only the idle timer runs. The next readable event makes
        // a new Http1Session, which reads as the old one would have.
        Resting,
        Closed,  // the socket is closed; the object is freed at the end of the loop's turn
    };

    // `tls`: accepted on a TLS listener (the loop's config().tls is the context).
    Connection(IoThread& owner, int fd, uint64_t id, const sockaddr_storage& peer,
               bool tls = false);
    ~Connection();
    // Right after the accept: serves what already arrived, then registers with the loop if the
    // connection is still open. May close (and retire) the connection before it returns.
    void start();

    uint64_t id() const { return id_; }
    int fd() const { return fd_; }
    IoThread& owner() { return owner_; }
    Transport& transport() { return *transport_; }
    const Transport& transport() const { return *transport_; }
    std::string peer_address() const;
    PeerIp peer_ip() const;
    unsigned loop_index() const;
    TlsFacts tls_facts() const { return transport_->tls_facts(); }

    // --- for the session ---
    // What the loop reports to on_io: net::kReadable, net::kWritable.
    void set_interest(uint8_t events);
    // The one timer: on_timeout after `ms` (the session's) replaces any earlier one.
    void schedule(uint64_t ms);
    void cancel_timer();
    // The running session is done: `next` speaks from now on, starting with `input` (bytes
    // the old session read past its last message). The old session is freed at the end of the
    // loop's turn; it must return without touching the connection again.
    void hand_off(std::unique_ptr<Session> next, std::string_view input);
    // The HTTP/1.1 session has nothing read, nothing owed and nothing unsent after a request:
    // the connection rests (Stage::Resting) with the idle timeout. The session is freed as by
    // hand_off, and must return at once.
    void rest();
    // Requests served on this connection, whichever session served them (a resting connection
    // keeps the count for max_requests_per_connection).
    uint32_t requests_served() const { return requests_served_; }
    void count_request() { ++requests_served_; }

    // --- for IoThread: tasks and the drain ---
    void complete(uint64_t sequence, Reply&& reply);
    bool admit_waiting_body();
    void kicked();
    void resume_stream(const StreamLink* link);
    void close_now();        // immediately, whatever is pending; cancels owed deferred answers
    void close_when_idle();  // during a drain: after what is in flight

private:
    void on_io(uint32_t events) override;
    void on_timeout() override;

    // Before the session (connection_proxy.cpp).
    void set_peer(const sockaddr_storage& peer);
    void expect_proxy_header(const sockaddr_storage& peer);
    void read_proxy_header();
    // The transport is ready for bytes: the handshake (TLS) or the session.
    void begin_transport(std::string_view input, uint64_t accepted_ms);
    void run_handshake();
    void refuse_plain_http();
    void begin_session(std::string_view input);
    TlsTransport& tls();
    // From `since_ms` (the accept), the stage's own timeout: header_ms or handshake_ms.
    void arm_stage_timer(uint64_t since_ms);
    void wake();          // Stage::Resting: a new HTTP/1.1 session reads
    void make_session();  // Stage::Resting to Session, nothing read yet

    // Stage::ProxyHeader only: what was read of the header, and when the connection was
    // accepted (the handshake after it is timed from then too).
    struct ProxyHeaderRead {
        std::string bytes;
        uint64_t accepted_ms;
    };

    // Every idle connection holds all of this: keep it small (docs/BENCHMARKS.md, idle memory).
    IoThread& owner_;
    uint64_t id_;
    std::unique_ptr<Transport> transport_;
    std::unique_ptr<Session> session_;  // none while Resting
    std::unique_ptr<ProxyHeaderRead> proxy_header_;
    int fd_;
    uint32_t requests_served_ = 0;
    Stage stage_ = Stage::Session;
    const bool tls_listener_;  // the transport is TLS: the handshake comes before the session
    uint8_t interest_ = 0;     // what the loop is asked to report (once registered_)
    bool registered_ = false;  // in the loop's epoll set: start() may finish without it
    uint8_t peer_family_ = 0;  // the peer's address, compact (no sockaddr_storage per connection)
    uint8_t peer_bytes_[16] = {};
};

}  // namespace rivet::engine
