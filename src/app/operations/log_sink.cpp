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

SinkWrite LogSink::write(std::string_view bytes) {
    SinkWrite result;
    std::lock_guard lock(mutex_);
    if (fd_ < 0) return {bytes.size(), 0};  // "off": nothing is asked to be kept
    while (result.written < bytes.size()) {
        ssize_t n = ::write(fd_, bytes.data() + result.written, bytes.size() - result.written);
        if (n < 0) {
            if (errno == EINTR) continue;
            result.error = errno;
            return result;
        }
        result.written += size_t(n);
    }
    return result;
}

std::string WriteOutage::after_write(const std::string& target, int error, uint64_t dropped) {
    if (error != 0 && state_ == State::Writing) {
        state_ = State::Failing;
        dropped_before_ = dropped;
        return "cannot write to " + target + ": " + std::strerror(error) +
               "; lines are lost until writing resumes";
    }
    if (error == 0 && state_ == State::Failing) {
        state_ = State::Writing;
        return "writing to " + target + " again; " + std::to_string(dropped - dropped_before_) +
               " lines were lost";
    }
    return {};
}

}  // namespace rivet::app
