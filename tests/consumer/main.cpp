// A program as a user of rivet writes it: public headers only, linked against an installed or
// embedded rivet. It starts an App on a free port, asks it one question over a real TCP socket
// and exits 0 only if the answer is right (tests/consumer/run.sh builds it three ways).
#include <rivet/rivet.hpp>

#include <arpa/inet.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <sys/time.h>
#include <unistd.h>

#include <cstdio>
#include <exception>
#include <string>

namespace {

// One HTTP/1.1 exchange with 127.0.0.1:port; returns everything the server sent until it closed.
std::string fetch(uint16_t port, const std::string& request) {
    int fd = ::socket(AF_INET, SOCK_STREAM, 0);
    if (fd < 0) return {};
    // A server that never answers must fail the check, not hang it.
    timeval timeout{.tv_sec = 10, .tv_usec = 0};
    ::setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &timeout, sizeof timeout);
    sockaddr_in addr{};
    addr.sin_family = AF_INET;
    addr.sin_port = htons(port);
    addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    std::string reply;
    if (::connect(fd, reinterpret_cast<sockaddr*>(&addr), sizeof addr) == 0 &&
        ::send(fd, request.data(), request.size(), MSG_NOSIGNAL) == ssize_t(request.size())) {
        char buf[4096];
        for (ssize_t n; (n = ::recv(fd, buf, sizeof buf, 0)) > 0;) reply.append(buf, size_t(n));
    }
    ::close(fd);
    return reply;
}

}  // namespace

int main() {
    try {
        rivet::App app;
        // Compression pulls zlib, brotli and zstd into the link: a static librivet.a must bring
        // them through rivetConfig.cmake and rivet.pc. Its answer here is small: sent as it is.
        app.use(rivet::compression());
        app.get("/greet/:name", [](rivet::Request& req, rivet::Response& res) {
            res.text("hello, " + std::string(req.param("name")));
        });
        uint16_t port = app.start({.host = "127.0.0.1", .port = 0, .quiet = true});
        std::string reply = fetch(port,
                                  "GET /greet/consumer HTTP/1.1\r\nHost: localhost\r\n"
                                  "Connection: close\r\n\r\n");
        app.stop();
        // Content-Length framing and Connection: close: the body is all that follows the head.
        bool ok = reply.starts_with("HTTP/1.1 200 ") && reply.ends_with("\r\n\r\nhello, consumer");
        std::printf("consumer: rivet %s on port %u answered %s\n", RIVET_VERSION_STRING,
                    unsigned(port), ok ? "correctly" : "WRONGLY:");
        if (!ok) std::printf("%s\n", reply.c_str());
        return ok ? 0 : 1;
    } catch (const std::exception& e) {
        std::fprintf(stderr, "consumer: %s\n", e.what());
        return 1;
    }
}
