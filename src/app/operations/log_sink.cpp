#include "app/operations/log_sink.hpp"

#include <fcntl.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>

namespace rivet::app {

LogSink::~LogSink() {
    close_owned();
}

void LogSink::close_owned() {
    if (owned_ && fd_ >= 0) ::close(fd_);
    fd_ = -1;
    owned_ = false;
}

std::string LogSink::open(const std::string& target) {
    int fd = -1;
    bool owned = false;
    if (target == "stdout" || target == "-") {
        fd = STDOUT_FILENO;
    } else if (target == "stderr") {
        fd = STDERR_FILENO;
    } else if (!target.empty() && target != "off") {
        fd = ::open(target.c_str(), O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC, 0644);
        if (fd < 0) return "cannot open " + target + ": " + std::strerror(errno);
        owned = true;
    }
    std::lock_guard lock(mutex_);
    close_owned();
    target_ = target;
    fd_ = fd;
    owned_ = owned;
    return {};
}

std::string LogSink::reopen() {
    std::string target;
    {
        std::lock_guard lock(mutex_);
        if (!owned_) return {};
        target = target_;
    }
    return open(target);
}

bool LogSink::write(std::string_view bytes) {
    std::lock_guard lock(mutex_);
    if (fd_ < 0) return true;
    while (!bytes.empty()) {
        ssize_t n = ::write(fd_, bytes.data(), bytes.size());
        if (n < 0) {
            if (errno == EINTR) continue;
            return false;
        }
        bytes.remove_prefix(size_t(n));
    }
    return true;
}

}  // namespace rivet::app
