// Socket plumbing for the loops: listening sockets (one per loop, SO_REUSEPORT) and accepted
// connections, all non-blocking.
#pragma once

#include <netinet/in.h>
#include <sys/socket.h>

#include <cstdint>
#include <string>

namespace rivet::net {

// Opens a non-blocking TCP listening socket on host:port ("0.0.0.0", "::", "127.0.0.1", ...),
// with TCP_NODELAY, which the connections accepted from it inherit.
// With `reuse_port`, several sockets may bind the same address and the kernel spreads incoming
// connections over them. Throws std::runtime_error naming the address on failure.
int listen_tcp(const std::string& host, uint16_t port, bool reuse_port, int backlog = 4096);

// Fails (std::runtime_error, "address in use") when another socket listens on host:port, even
// one with SO_REUSEPORT that our own SO_REUSEPORT sockets could silently share it with.
// Returns the port (the one the kernel picked, for port 0). It binds and never listens, so a
// client connecting meanwhile is refused rather than taken and reset.
uint16_t claim_port(const std::string& host, uint16_t port);

// The port a socket is bound to (for --port 0).
uint16_t local_port(int fd);
// The address a socket is bound to, numeric ("127.0.0.1", "::").
std::string local_address(int fd);

// An inherited listening socket (systemd socket activation, an in-place upgrade) made to behave
// as one of ours: non-blocking (another loop or process may take a connection first),
// close-on-exec, TCP_NODELAY and TCP_DEFER_ACCEPT.
void adopt_listener(int fd);
// Another listening socket for the address `like` listens on: a new SO_REUSEPORT socket when
// `like` has SO_REUSEPORT and the kernel lets us join its group (the port is already ours: no
// claim_port), else a duplicate of `like` sharing its queue. Throws std::runtime_error.
int listen_beside(int like, int backlog = 4096);

// The socket's close() will reset the connection (SO_LINGER 0) and drop what its send buffer
// still holds, instead of delivering it first: for a peer that would not take it (nginx's
// reset_timedout_connection), whose orphaned socket would otherwise keep megabytes in the kernel.
void reset_on_close(int fd);

// Peer address of an accepted connection, compact, for logs and per-address limits.
struct PeerAddress {
    sockaddr_storage addr{};
    std::string to_string() const;  // "127.0.0.1" or "::1"
};

// Accepts one pending connection: non-blocking, close-on-exec, TCP_NODELAY (from the listener).
// Returns the fd, or -1 with errno (EAGAIN when none is pending).
int accept_connection(int listen_fd, PeerAddress* peer);

}  // namespace rivet::net
