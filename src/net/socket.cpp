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

int listen_tcp(const std::string& host, uint16_t port, bool reuse_port, int backlog) {
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
    int fd = socket(res->ai_family, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
    int err = errno;
    if (fd >= 0) {
        int one = 1;
        setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof one);
        if (reuse_port) setsockopt(fd, SOL_SOCKET, SO_REUSEPORT, &one, sizeof one);
        // Linux copies TCP_NODELAY to every connection accepted from this socket: one
        // setsockopt here instead of one per connection.
        setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof one);
        // Hand a connection to accept() only once its first bytes have arrived (Apache's
        // AcceptFilter, nginx's `listen ... deferred`): Connection::start() then reads the request
        // at once, and a short connection costs one wake-up instead of two.
        setsockopt(fd, IPPROTO_TCP, TCP_DEFER_ACCEPT, &one, sizeof one);
        if (bind(fd, res->ai_addr, res->ai_addrlen) < 0 || listen(fd, backlog) < 0) {
            err = errno;
            close(fd);
            fd = -1;
        }
    }
    freeaddrinfo(res);
    if (fd < 0)
        throw std::runtime_error("cannot listen on " + host + ":" + port_str + ": " +
                                 std::strerror(err));
    return fd;
}

uint16_t claim_port(const std::string& host, uint16_t port) {
    // A plain socket (no SO_REUSEPORT) cannot bind where any other socket is bound.
    int probe = listen_tcp(host, port, false, 1);
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

}  // namespace rivet::net
