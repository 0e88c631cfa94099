// Transport's shared parts, and plain TCP.
#include "engine/transport.hpp"

#include <sys/ioctl.h>
#include <sys/sendfile.h>
#include <sys/socket.h>
#include <sys/uio.h>
#include <unistd.h>

#include <cerrno>

#include "engine/io_thread.hpp"
#include "net/socket_io.hpp"

namespace rivet::engine {

Transport::~Transport() {
    if (fd_ >= 0) ::close(fd_);
}

int Transport::release() {
    const int fd = fd_;
    fd_ = -1;
    return fd;
}

void Transport::shutdown_write() {
    ::shutdown(fd_, SHUT_WR);
}

bool Transport::discard_input() {
    const ssize_t n = ::read(fd_, owner_.read_buffer(), IoThread::kReadBufferSize);
    return n > 0 || (n < 0 && (errno == EAGAIN || errno == EINTR));
}

size_t Transport::unread_in_socket() const {
    int unread = 0;
    if (ioctl(fd_, FIONREAD, &unread) != 0) return 0;
    return unread > 0 ? size_t(unread) : 0;
}

ssize_t TcpTransport::read(char* buf, size_t room) {
    const ssize_t n = net::read_socket(fd_, buf, room);
    drained_ = n >= 0 && size_t(n) < room;
    if (n > 0) LoopStats::bump(owner_.stats().bytes_in, uint64_t(n));
    return n;
}

ssize_t TcpTransport::write(std::span<const std::string_view> pieces, bool more) {
    const int flags = MSG_NOSIGNAL | (more ? MSG_MORE : 0);
    if (pieces.size() == 1) return net::send_socket(fd_, pieces[0].data(), pieces[0].size(), flags);
    iovec iov[16];
    msghdr msg{};
    size_t count = 0;
    for (std::string_view p : pieces) {
        if (count == std::size(iov)) break;  // the caller sends the rest with the next call
        if (p.empty()) continue;
        iov[count++] = {const_cast<char*>(p.data()), p.size()};
    }
    msg.msg_iov = iov;
    msg.msg_iovlen = count;
    return net::sendmsg_socket(fd_, &msg, flags);
}

ssize_t TcpTransport::send_file(int file, uint64_t offset, size_t len) {
    off_t at = off_t(offset);
    return ::sendfile(fd_, file, &at, len);
}

}  // namespace rivet::engine
