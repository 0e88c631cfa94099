#include "raw_client.hpp"

#include <arpa/inet.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

#include <stdexcept>

namespace rivet::test {

// Sends `request` and reads until `responses` complete responses (or the peer closes).
std::string exchange(uint16_t port, const std::string& request, int responses) {
    int fd = socket(AF_INET, SOCK_STREAM, 0);
    sockaddr_in addr{};
    addr.sin_family = AF_INET;
    addr.sin_port = htons(port);
    addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    if (connect(fd, reinterpret_cast<sockaddr*>(&addr), sizeof addr) != 0) {
        close(fd);
        throw std::runtime_error("connect failed");
    }
    timeval tv{5, 0};
    setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof tv);
    send(fd, request.data(), request.size(), MSG_NOSIGNAL);
    std::string got;
    char buf[65536];
    auto count = [&] {
        // Complete responses: a head, and a body by Content-Length or chunked terminator.
        int n = 0;
        size_t pos = 0;
        while (true) {
            size_t end = got.find("\r\n\r\n", pos);
            if (end == std::string::npos) return n;
            std::string head = got.substr(pos, end - pos);
            size_t body = end + 4;
            if (auto cl = head.find("Content-Length: "); cl != std::string::npos) {
                size_t len = std::stoul(head.substr(cl + 16));
                if (got.size() < body + len) return n;
                pos = body + len;
            } else if (head.find("Transfer-Encoding: chunked") != std::string::npos) {
                size_t last = got.find("\r\n0\r\n\r\n", body - 2);
                if (last == std::string::npos) return n;
                pos = last + 7;
            } else if (head.starts_with("HTTP/1.1 204") || head.starts_with("HTTP/1.1 304")) {
                pos = body;
            } else {
                return n;  // delimited by the close: read until EOF
            }
            ++n;
        }
    };
    while (responses == 0 || count() < responses) {
        ssize_t r = recv(fd, buf, sizeof buf, 0);
        if (r <= 0) break;
        got.append(buf, size_t(r));
    }
    close(fd);
    return got;
}

}  // namespace rivet::test
