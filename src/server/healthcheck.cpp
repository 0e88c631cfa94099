#include "server/healthcheck.hpp"

#include <netdb.h>
#include <sys/socket.h>
#include <sys/time.h>
#include <unistd.h>

#include <cerrno>
#include <charconv>
#include <chrono>
#include <cstdio>
#include <cstring>

namespace rivet::server {

namespace {

constexpr uint64_t kDefaultTimeoutMs = 2000;
constexpr size_t kMaxStatusLine = 8192;  // a longer first line is not an HTTP answer

struct Fd {
    int fd = -1;
    ~Fd() {
        if (fd >= 0) ::close(fd);
    }
};

bool set_timeouts(int fd, uint64_t ms) {
    timeval tv{};
    tv.tv_sec = time_t(ms / 1000);
    tv.tv_usec = suseconds_t((ms % 1000) * 1000);
    return setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof tv) == 0 &&
           setsockopt(fd, SOL_SOCKET, SO_SNDTIMEO, &tv, sizeof tv) == 0;
}

std::string errno_text(int e) {
    if (e == EAGAIN || e == EWOULDBLOCK || e == EINPROGRESS) return "timed out";
    return std::strerror(e);
}

// Connects to one of the addresses; a blocking connect honours SO_SNDTIMEO on Linux.
std::string connect_any(const HealthUrl& u, uint64_t timeout_ms, Fd& out) {
    addrinfo hints{};
    hints.ai_socktype = SOCK_STREAM;
    addrinfo* list = nullptr;
    if (int rc = getaddrinfo(u.host.c_str(), u.port.c_str(), &hints, &list); rc != 0)
        return std::string("cannot resolve ") + u.host + ": " + gai_strerror(rc);
    std::string why = "no address";
    for (addrinfo* a = list; a; a = a->ai_next) {
        Fd fd{::socket(a->ai_family, a->ai_socktype | SOCK_CLOEXEC, a->ai_protocol)};
        if (fd.fd < 0 || !set_timeouts(fd.fd, timeout_ms)) {
            why = errno_text(errno);
            continue;
        }
        if (::connect(fd.fd, a->ai_addr, a->ai_addrlen) == 0) {
            std::swap(out.fd, fd.fd);
            freeaddrinfo(list);
            return {};
        }
        why = errno_text(errno);
    }
    freeaddrinfo(list);
    return why;
}

// The status of the answer's first line, or an error. Reads only that far.
std::string get_status(const HealthUrl& u, uint64_t timeout_ms, int& status) {
    Fd fd;
    if (auto e = connect_any(u, timeout_ms, fd); !e.empty()) return e;
    bool v6 = u.host.find(':') != std::string::npos;
    std::string host = v6 ? "[" + u.host + "]" : u.host;
    std::string req = "GET " + u.path + " HTTP/1.1\r\nHost: " + host + ":" + u.port +
                      "\r\nUser-Agent: rivet-healthcheck\r\nConnection: close\r\n\r\n";
    // SO_RCVTIMEO bounds each read; the deadline bounds them all together.
    auto deadline = std::chrono::steady_clock::now() + std::chrono::milliseconds(timeout_ms);
    for (size_t sent = 0; sent < req.size();) {
        ssize_t n = ::send(fd.fd, req.data() + sent, req.size() - sent, MSG_NOSIGNAL);
        if (n < 0 && errno == EINTR) continue;
        if (n <= 0) return "sending: " + errno_text(errno);
        sent += size_t(n);
    }
    std::string line;
    char buf[1024];
    while (line.find("\r\n") == std::string::npos) {
        if (line.size() > kMaxStatusLine) return "malformed answer (no status line)";
        if (std::chrono::steady_clock::now() >= deadline) return "timed out";
        ssize_t n = ::recv(fd.fd, buf, sizeof buf, 0);
        if (n < 0 && errno == EINTR) continue;
        if (n < 0) return errno_text(errno);
        if (n == 0) {
            if (line.empty()) return "connection closed without an answer";
            break;
        }
        line.append(buf, size_t(n));
    }
    // "HTTP/1.x SSS ..."
    if (line.size() < 12 || line.compare(0, 7, "HTTP/1.") != 0 || line[8] != ' ' ||
        (line.size() > 12 && line[12] != ' ' && line[12] != '\r'))
        return "malformed answer (no status line)";
    auto r = std::from_chars(line.data() + 9, line.data() + 12, status);
    if (r.ec != std::errc() || r.ptr != line.data() + 12 || status < 100)
        return "malformed answer (bad status)";
    return {};
}

}  // namespace

HealthUrl parse_health_url(const std::string& url, std::string& error) {
    HealthUrl u;
    const std::string scheme = "http://";
    if (url.compare(0, scheme.size(), scheme) != 0) {
        error = "only http:// URLs are supported, got '" + url + "'";
        return u;
    }
    std::string rest = url.substr(scheme.size());
    size_t slash = rest.find('/');
    std::string authority = rest.substr(0, slash);
    u.path = slash == std::string::npos ? "/" : rest.substr(slash);
    std::string port;
    if (!authority.empty() && authority[0] == '[') {
        size_t close = authority.find(']');
        if (close == std::string::npos) {
            error = "unclosed '[' in '" + url + "'";
            return u;
        }
        u.host = authority.substr(1, close - 1);
        std::string after = authority.substr(close + 1);
        if (!after.empty() && after[0] != ':') {
            error = "expected ':' after ']' in '" + url + "'";
            return u;
        }
        if (!after.empty())
            port = after.substr(1);
        else
            port = "80";
    } else {
        size_t colon = authority.find(':');
        u.host = authority.substr(0, colon);
        port = colon == std::string::npos ? "80" : authority.substr(colon + 1);
    }
    unsigned n = 0;
    auto r = std::from_chars(port.data(), port.data() + port.size(), n);
    if (u.host.empty() || r.ec != std::errc() || r.ptr != port.data() + port.size() || n == 0 ||
        n > 65535) {
        error = "expected http://HOST:PORT/PATH, got '" + url + "'";
        return u;
    }
    for (char ch : u.path)
        if (ch <= ' ' || ch == 0x7f) {
            error = "spaces or control characters in the path of '" + url + "'";
            return u;
        }
    u.port = std::to_string(n);
    return u;
}

int run_healthcheck(const std::vector<std::string>& args) {
    std::string url;
    uint64_t timeout_ms = kDefaultTimeoutMs;
    for (size_t i = 0; i < args.size(); ++i) {
        if (args[i] == "--timeout-ms" && i + 1 < args.size()) {
            const std::string& v = args[++i];
            auto r = std::from_chars(v.data(), v.data() + v.size(), timeout_ms);
            if (r.ec != std::errc() || r.ptr != v.data() + v.size() || timeout_ms == 0 ||
                timeout_ms > 600'000) {
                std::fprintf(stderr, "rivet: invalid value '%s' for --timeout-ms\n", v.c_str());
                return 2;
            }
        } else if (url.empty() && args[i].rfind("--", 0) != 0) {
            url = args[i];
        } else {
            std::fprintf(stderr, "rivet: usage: rivet --healthcheck URL [--timeout-ms N]\n");
            return 2;
        }
    }
    if (url.empty()) {
        std::fprintf(stderr, "rivet: usage: rivet --healthcheck URL [--timeout-ms N]\n");
        return 2;
    }
    std::string error;
    HealthUrl u = parse_health_url(url, error);
    if (!error.empty()) {
        std::fprintf(stderr, "rivet: --healthcheck: %s\n", error.c_str());
        return 2;
    }
    int status = 0;
    if (auto why = get_status(u, timeout_ms, status); !why.empty()) {
        std::fprintf(stderr, "healthcheck: %s: %s\n", url.c_str(), why.c_str());
        return 1;
    }
    std::fprintf(stderr, "healthcheck: %s: %d\n", url.c_str(), status);
    return status >= 200 && status < 300 ? 0 : 1;
}

}  // namespace rivet::server
