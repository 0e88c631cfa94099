// Transport: how one connection's bytes travel, under whatever protocol speaks over them. It owns
// the socket; the session above (HTTP/1.1 now; WebSocket, HTTP/2 later) reads and writes
// plaintext through this one interface and never asks which transport it has. Plain TCP passes
// bytes through; TLS (transport_tls.hpp) turns them into records and runs the handshake. As nginx
// swaps a connection's recv/send for SSL ones, and h2o hides TLS inside its socket: a new byte
// path (kernel TLS, io_uring) is a new transport, not a branch in every protocol.
//
// The calls mirror the system calls they stand for (read(2), sendmsg(2), sendfile(2)): a byte
// count, 0 for the peer's end, or -1 with errno (EAGAIN: not now). A transport never closes the
// connection on its own: an error goes back to the caller, who decides.
#pragma once

#include <sys/types.h>

#include <cstddef>
#include <cstdint>
#include <optional>
#include <span>
#include <string_view>

#include "engine/exchange.hpp"
#include "net/tcp_progress.hpp"

namespace rivet::engine {

class IoThread;

class Transport {
public:
    Transport(IoThread& owner, int fd) : owner_(owner), fd_(fd) {}
    virtual ~Transport();  // closes the socket unless released
    Transport(const Transport&) = delete;
    Transport& operator=(const Transport&) = delete;

    int fd() const { return fd_; }
    // Gives the socket up without closing it (a transport replaced by another on it).
    int release();

    // Plaintext into [buf, buf + room). Counted in LoopStats::bytes_in.
    virtual ssize_t read(char* buf, size_t room) = 0;
    // Sends the pieces in order as far as the socket takes them; `more`: more follows at once
    // (MSG_MORE: a last answer and the FIN leave in one segment). Returns the plaintext bytes
    // taken. A transport that frames bytes (TLS) may take bytes the socket has not: they wait
    // in its backlog, and it takes no more until flush_backlog() has sent them.
    virtual ssize_t write(std::span<const std::string_view> pieces, bool more) = 0;
    ssize_t write(std::string_view bytes, bool more = false) { return write({&bytes, 1}, more); }
    // Up to `len` bytes of a file from `offset`. Plain TCP: sendfile(2), the bytes the socket
    // took. TLS: the piece is read into the loop's buffer and leaves as records.
    virtual ssize_t send_file(int file, uint64_t offset, size_t len) = 0;
    // The largest file piece worth sending in one call.
    virtual size_t file_piece() const = 0;

    // Output taken by write() that the socket has not: sent by flush_backlog() (true: none
    // left; false: some waits, or an error, which errno tells when not EAGAIN).
    virtual bool backlog() const { return false; }
    virtual bool flush_backlog() { return true; }
    // Input read from the socket that no read() has returned yet (part of a TLS record).
    virtual bool input_pending() const { return false; }
    // The peer ended its side inside the protocol (TLS close_notify came with the last bytes
    // read): no readiness event will say so again.
    virtual bool peer_closed() const { return false; }
    // The last read() emptied the socket: it read less than it asked for and nothing waits in
    // the transport. Valid until forget_drained().
    bool drained() const { return drained_; }
    void forget_drained() { drained_ = false; }

    // Ends our direction gracefully: TLS's close_notify, then the FIN.
    virtual void shutdown_write();
    // Reads and drops whatever arrived (a lingering close). False: the peer is gone.
    bool discard_input();
    // Bytes waiting in the socket's receive queue.
    size_t unread_in_socket() const;
    // The bytes the peer has taken so far (TCP: acknowledged), framing included; nothing when
    // the socket cannot tell.
    std::optional<uint64_t> bytes_taken_by_peer() const { return net::tcp_bytes_acked(fd_); }

    virtual TlsFacts tls_facts() const { return {}; }

    // When a write last moved bytes: the write timeout counts from it.
    uint64_t write_progress_ms = 0;

protected:
    IoThread& owner_;
    int fd_;
    bool drained_ = false;
};

// Plain TCP (or any stream socket): the system calls as they are.
class TcpTransport final : public Transport {
public:
    using Transport::Transport;
    using Transport::write;
    ssize_t read(char* buf, size_t room) override;
    ssize_t write(std::span<const std::string_view> pieces, bool more) override;
    ssize_t send_file(int file, uint64_t offset, size_t len) override;
    size_t file_piece() const override { return 256 * 1024; }
};

}  // namespace rivet::engine
