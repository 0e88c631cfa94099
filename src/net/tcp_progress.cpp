// Apart from socket.cpp: glibc's <netinet/tcp.h> has no tcpi_bytes_acked, and it cannot be
// included together with <linux/tcp.h>, which has.
#include "net/tcp_progress.hpp"

#include <linux/tcp.h>
#include <netinet/in.h>
#include <sys/socket.h>

#include <cstddef>

namespace rivet::net {

std::optional<uint64_t> tcp_bytes_acked(int fd) {
    tcp_info info{};
    socklen_t len = sizeof info;
    if (getsockopt(fd, IPPROTO_TCP, TCP_INFO, &info, &len) != 0) return std::nullopt;
    // An older kernel fills less of the structure than this header describes.
    if (len < offsetof(tcp_info, tcpi_bytes_acked) + sizeof info.tcpi_bytes_acked)
        return std::nullopt;
    return info.tcpi_bytes_acked;
}

}  // namespace rivet::net
