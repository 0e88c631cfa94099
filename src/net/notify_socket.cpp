#include "net/notify_socket.hpp"

#include <unistd.h>

#include <cerrno>
#include <cstddef>
#include <cstring>
#include <utility>

namespace rivet::net {

NotifySocket::NotifySocket(std::string_view address, std::string& problem) : address_(address) {
    if (address.empty()) return;
    if (address.front() != '/' && address.front() != '@') {
        problem = "NOTIFY_SOCKET=" + address_ + " is neither a path nor an abstract name ('@')";
        return;
    }
    if (address.size() >= sizeof peer_.sun_path) {
        problem = "NOTIFY_SOCKET=" + address_ + " is longer than a socket address may be";
        return;
    }
    peer_.sun_family = AF_UNIX;
    std::memcpy(peer_.sun_path, address.data(), address.size());
    if (address.front() == '@') peer_.sun_path[0] = '\0';  // abstract: no terminating NUL
    peer_size_ = socklen_t(offsetof(sockaddr_un, sun_path) + address.size() +
                           (address.front() == '/' ? 1 : 0));
    // Close-on-exec: a process we start (an in-place upgrade) opens its own from the variable.
    fd_ = socket(AF_UNIX, SOCK_DGRAM | SOCK_CLOEXEC | SOCK_NONBLOCK, 0);
    if (fd_ < 0) problem = std::string("NOTIFY_SOCKET: socket: ") + std::strerror(errno);
}

NotifySocket::~NotifySocket() {
    if (fd_ >= 0) close(fd_);
}

NotifySocket::NotifySocket(NotifySocket&& other) noexcept
    : fd_(std::exchange(other.fd_, -1)),
      address_(std::move(other.address_)),
      peer_(other.peer_),
      peer_size_(other.peer_size_) {}

NotifySocket& NotifySocket::operator=(NotifySocket&& other) noexcept {
    if (this != &other) {
        if (fd_ >= 0) close(fd_);
        fd_ = std::exchange(other.fd_, -1);
        address_ = std::move(other.address_);
        peer_ = other.peer_;
        peer_size_ = other.peer_size_;
    }
    return *this;
}

std::string NotifySocket::send(std::string_view state) const {
    if (fd_ < 0) return "";
    // MSG_NOSIGNAL: a manager gone away must not kill us with SIGPIPE.
    ssize_t n;
    do {
        n = sendto(fd_, state.data(), state.size(), MSG_NOSIGNAL,
                   reinterpret_cast<const sockaddr*>(&peer_), peer_size_);
    } while (n < 0 && errno == EINTR);
    if (n < 0) return "NOTIFY_SOCKET=" + address_ + ": " + std::strerror(errno);
    return "";
}

}  // namespace rivet::net
