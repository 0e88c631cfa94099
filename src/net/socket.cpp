#include "net/socket.hpp"

#include <arpa/inet.h>
#include <fcntl.h>
#include <netdb.h>
#include <netinet/tcp.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <stdexcept>

namespace rivet::net {

namespace {

// What every listening socket of ours gets, made here or inherited.
void tune_listener(int fd) {
    int one = 1;
    // Linux copies TCP_NODELAY to every connection accepted from this socket: one setsockopt
    // here instead of one per connection.
    setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof one);
    // Hand a connection to accept() only once its first bytes have arrived (Apache's
    // AcceptFilter, nginx's `listen ... deferred`): Connection::start() then reads the request at
    // once, and a short connection costs one wake-up instead of two.
    setsockopt(fd, IPPROTO_TCP, TCP_DEFER_ACCEPT, &one, sizeof one);
}

// Closes a socket whose setup failed and returns -1, with errno still the failure's.
int close_failed(int fd) {
    const int err = errno;
    close(fd);
    errno = err;
    return -1;
}

// A bound, non-blocking socket on `addr`, not listening; -1 with errno on failure.
int open_bound(const sockaddr* addr, socklen_t len, bool reuse_port) {
    int fd = socket(addr->sa_family, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
    if (fd < 0) return -1;
    int one = 1;
    setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof one);
    if (reuse_port) setsockopt(fd, SOL_SOCKET, SO_REUSEPORT, &one, sizeof one);
    if (bind(fd, addr, len) < 0) return close_failed(fd);
    return fd;
}

// A bound, listening, non-blocking socket on `addr`; -1 with errno on failure.
int open_listener(const sockaddr* addr, socklen_t len, bool reuse_port, int backlog) {
    int fd = open_bound(addr, len, reuse_port);
    if (fd < 0) return -1;
    tune_listener(fd);
    if (listen(fd, backlog) < 0) return close_failed(fd);
    return fd;
}

// `open` (open_bound or open_listener) on host:port; throws std::runtime_error naming the
// address when it cannot be parsed or `open` fails.
template <class Open>
int open_on(const std::string& host, uint16_t port, Open&& open) {
    addrinfo hints{};
    hints.ai_family = AF_UNSPEC;
    hints.ai_socktype = SOCK_STREAM;
    hints.ai_flags = AI_PASSIVE | AI_NUMERICHOST | AI_NUMERICSERV;
    addrinfo* res = nullptr;
    std::string port_str = std::to_string(port);
    int rc = getaddrinfo(host.c_str(), port_str.c_str(), &hints, &res);
    if (rc != 0)
        throw std::runtime_error("cannot listen on " + host + ":" + port_str + ": " +
                                 gai_strerror(rc) + " (expected a numeric IPv4 or IPv6 address)");
    int fd = open(res->ai_addr, res->ai_addrlen);
    int err = errno;
    freeaddrinfo(res);
    if (fd < 0)
        throw std::runtime_error("cannot listen on " + host + ":" + port_str + ": " +
                                 std::strerror(err));
    return fd;
}

}  // namespace

int listen_tcp(const std::string& host, uint16_t port, bool reuse_port, int backlog) {
    return open_on(host, port, [&](const sockaddr* addr, socklen_t len) {
        return open_listener(addr, len, reuse_port, backlog);
    });
}

void adopt_listener(int fd) {
    int flags = fcntl(fd, F_GETFL);
    if (flags >= 0 && !(flags & O_NONBLOCK)) fcntl(fd, F_SETFL, flags | O_NONBLOCK);
    fcntl(fd, F_SETFD, FD_CLOEXEC);
    tune_listener(fd);
}

int listen_beside(int like, int backlog) {
    sockaddr_storage ss{};
    socklen_t len = sizeof ss;
    int reuse = 0;
    socklen_t reuse_len = sizeof reuse;
    getsockopt(like, SOL_SOCKET, SO_REUSEPORT, &reuse, &reuse_len);
    if (reuse && getsockname(like, reinterpret_cast<sockaddr*>(&ss), &len) == 0) {
        int fd = open_listener(reinterpret_cast<sockaddr*>(&ss), len, true, backlog);
        if (fd >= 0) return fd;
    }
    // No SO_REUSEPORT on the first socket (a systemd socket unit without ReusePort=), or another
    // user's group (sockets bound as root, we dropped privileges since): share its queue.
    int fd = fcntl(like, F_DUPFD_CLOEXEC, 0);
    if (fd < 0)
        throw std::runtime_error(std::string("cannot duplicate a listening socket: ") +
                                 std::strerror(errno));
    return fd;
}

std::string local_address(int fd) {
    PeerAddress a;
    socklen_t len = sizeof a.addr;
    getsockname(fd, reinterpret_cast<sockaddr*>(&a.addr), &len);
    return a.to_string();
}

uint16_t claim_port(const std::string& host, uint16_t port) {
    // A socket without SO_REUSEPORT cannot bind where another socket listens, whatever that one
    // set (SO_REUSEADDR lets it past sockets that only linger, as TIME_WAIT's). Bound, never
    // listening: a client that connects meanwhile is refused, not queued here and then reset
    // by the close.
    int probe = open_on(host, port, [](const sockaddr* addr, socklen_t len) {
        return open_bound(addr, len, false);
    });
    uint16_t bound = local_port(probe);
    close(probe);
    return bound;
}

uint16_t local_port(int fd) {
    sockaddr_storage ss{};
    socklen_t len = sizeof ss;
    getsockname(fd, reinterpret_cast<sockaddr*>(&ss), &len);
    if (ss.ss_family == AF_INET6) return ntohs(reinterpret_cast<sockaddr_in6*>(&ss)->sin6_port);
    return ntohs(reinterpret_cast<sockaddr_in*>(&ss)->sin_port);
}

std::string PeerAddress::to_string() const {
    char buf[INET6_ADDRSTRLEN] = "";
    if (addr.ss_family == AF_INET6) {
        auto* a = reinterpret_cast<const sockaddr_in6*>(&addr);
        inet_ntop(AF_INET6, &a->sin6_addr, buf, sizeof buf);
    } else if (addr.ss_family == AF_INET) {
        auto* a = reinterpret_cast<const sockaddr_in*>(&addr);
        inet_ntop(AF_INET, &a->sin_addr, buf, sizeof buf);
    }
    return buf;
}

int accept_connection(int listen_fd, PeerAddress* peer) {
    socklen_t len = sizeof peer->addr;
    int fd = accept4(listen_fd, reinterpret_cast<sockaddr*>(&peer->addr), &len,
                     SOCK_NONBLOCK | SOCK_CLOEXEC);
    return fd;  // TCP_NODELAY comes with it from the listening socket
}

void reset_on_close(int fd) {
    const linger abort{1, 0};
    setsockopt(fd, SOL_SOCKET, SO_LINGER, &abort, sizeof abort);
}

}  // namespace rivet::net
