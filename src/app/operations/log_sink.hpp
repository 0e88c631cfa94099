// LogSink: where a log's bytes go: a file opened for appending (reopened on demand, for
// logrotate's rename-then-SIGHUP), stdout or stderr. Writes are whole: a short write is
// continued, so lines from one call never interleave with another caller's.
#pragma once

#include <mutex>
#include <string>
#include <string_view>

namespace rivet::app {

class LogSink {
public:
    LogSink() = default;
    ~LogSink();
    LogSink(const LogSink&) = delete;
    LogSink& operator=(const LogSink&) = delete;

    // "stdout", "stderr", "off"/"" (nothing), or a path. Returns an error text, or empty.
    std::string open(const std::string& target);
    // Opens the same path again (a file renamed away is replaced by a new one).
    std::string reopen();
    bool enabled() const { return fd_ >= 0; }
    const std::string& target() const { return target_; }
    // False when the write failed (disk full, ...); the caller decides how loud to be.
    bool write(std::string_view bytes);

private:
    void close_owned();
    std::mutex mutex_;  // open/reopen against write: the writer may be another thread
    std::string target_;
    int fd_ = -1;
    bool owned_ = false;  // a file we opened (not stdout/stderr)
};

}  // namespace rivet::app
