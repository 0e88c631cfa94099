#include "server/socket_activation.hpp"

#include <fcntl.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <charconv>
#include <cstdlib>
#include <cstring>

namespace rivet::server {

namespace {

constexpr int kFirstFd = 3;     // SD_LISTEN_FDS_START
constexpr long kMaxFds = 1024;  // far above any real listener count; guards the loop below

bool parse_positive(const std::string& text, long max, long& out) {
    long v = 0;
    auto r = std::from_chars(text.data(), text.data() + text.size(), v);
    if (r.ec != std::errc() || r.ptr != text.data() + text.size() || v < 0 || v > max) return false;
    out = v;
    return true;
}

std::vector<std::string> split_names(const std::string& text) {
    std::vector<std::string> names;
    size_t start = 0;
    while (true) {
        size_t colon = text.find(':', start);
        names.push_back(text.substr(start, colon - start));
        if (colon == std::string::npos) return names;
        start = colon + 1;
    }
}

std::optional<std::string> env(const char* name) {
    const char* v = std::getenv(name);
    return v ? std::optional<std::string>(v) : std::nullopt;
}

}  // namespace

InheritedListeners parse_activation(const ActivationEnv& e, pid_t self, std::string& error) {
    InheritedListeners out;
    if (!e.listen_fds) return out;
    if (!e.listen_pid) {
        error = "LISTEN_FDS is set but LISTEN_PID is not";
        return out;
    }
    long pid = 0, count = 0;
    if (!parse_positive(*e.listen_pid, 1L << 30, pid) || pid == 0) {
        error = "LISTEN_PID='" + *e.listen_pid + "' is not a process id";
        return out;
    }
    if (pid != self) return out;  // meant for another process
    if (!parse_positive(*e.listen_fds, kMaxFds, count)) {
        error = "LISTEN_FDS='" + *e.listen_fds + "' is not a descriptor count from 0 to " +
                std::to_string(kMaxFds);
        return out;
    }
    std::vector<std::string> names;
    if (e.listen_fdnames) {
        names = split_names(*e.listen_fdnames);
        if (long(names.size()) != count) {
            error = "LISTEN_FDNAMES names " + std::to_string(names.size()) +
                    " descriptors but LISTEN_FDS says " + std::to_string(count);
            return out;
        }
    }
    for (long i = 0; i < count; ++i) {
        int fd = kFirstFd + int(i);
        const std::string name = names.empty() ? "" : names[size_t(i)];
        (name == "admin" ? out.admin : name == "https" ? out.https : out.http).push_back(fd);
    }
    return out;
}

std::string listen_fdnames(const InheritedListeners& l) {
    std::string names;
    auto add = [&](const std::vector<int>& fds, const char* name) {
        for (size_t i = 0; i < fds.size(); ++i) {
            if (!names.empty()) names += ':';
            names += name;
        }
    };
    add(l.http, "http");
    add(l.admin, "admin");
    add(l.https, "https");
    return names;
}

std::string check_listener(int fd) {
    std::string which = "descriptor " + std::to_string(fd);
    struct stat st {};
    if (fstat(fd, &st) < 0) return which + ": " + std::strerror(errno);
    if (!S_ISSOCK(st.st_mode)) return which + " is not a socket";
    int value = 0;
    socklen_t len = sizeof value;
    if (getsockopt(fd, SOL_SOCKET, SO_DOMAIN, &value, &len) < 0 ||
        (value != AF_INET && value != AF_INET6))
        return which + " is not an IPv4 or IPv6 socket";
    len = sizeof value;
    if (getsockopt(fd, SOL_SOCKET, SO_TYPE, &value, &len) < 0 || value != SOCK_STREAM)
        return which + " is not a TCP (stream) socket";
    len = sizeof value;
    if (getsockopt(fd, SOL_SOCKET, SO_ACCEPTCONN, &value, &len) < 0 || value != 1)
        return which + " is not listening (listen() was not called on it)";
    return "";
}

InheritedListeners take_inherited_listeners(std::string& error) {
    ActivationEnv e{env("LISTEN_PID"), env("LISTEN_FDS"), env("LISTEN_FDNAMES")};
    unsetenv("LISTEN_PID");
    unsetenv("LISTEN_FDS");
    unsetenv("LISTEN_FDNAMES");
    InheritedListeners found = parse_activation(e, getpid(), error);
    if (!error.empty()) {
        error = "inherited listening sockets: " + error;
        return {};
    }
    for (const auto* list : {&found.http, &found.admin, &found.https})
        for (int fd : *list) {
            if (auto why = check_listener(fd); !why.empty()) {
                error = "inherited listening sockets (LISTEN_FDS): " + why;
                return {};
            }
            fcntl(fd, F_SETFD, FD_CLOEXEC);
        }
    return found;
}

}  // namespace rivet::server
