// The service manager's notification socket: systemd's sd_notify protocol without libsystemd.
// A notification is one datagram of newline-separated "KEY=value" lines sent to the AF_UNIX
// datagram socket that $NOTIFY_SOCKET names: a file system path, or an abstract name when it
// begins with '@' (the '@' stands for the leading NUL byte). Knows nothing of what the lines
// mean (app/service_notifier.hpp says them).
#pragma once

#include <sys/socket.h>
#include <sys/un.h>

#include <string>
#include <string_view>

namespace rivet::net {

class NotifySocket {
public:
    NotifySocket() = default;  // closed: send() does nothing
    // A socket to `address` ($NOTIFY_SOCKET's form). Closed when `address` is empty (nothing
    // to tell) or unusable (not absolute, not '@', too long, no socket: `problem` says why).
    NotifySocket(std::string_view address, std::string& problem);
    ~NotifySocket();
    NotifySocket(NotifySocket&& other) noexcept;
    NotifySocket& operator=(NotifySocket&& other) noexcept;
    NotifySocket(const NotifySocket&) = delete;
    NotifySocket& operator=(const NotifySocket&) = delete;

    bool is_open() const { return fd_ >= 0; }
    const std::string& address() const { return address_; }
    // Sends `state` as one datagram (from any thread; never blocks): "" when it went, or the
    // error. Nothing to do and "" when closed.
    std::string send(std::string_view state) const;

private:
    int fd_ = -1;
    std::string address_;
    sockaddr_un peer_{};
    socklen_t peer_size_ = 0;
};

}  // namespace rivet::net
