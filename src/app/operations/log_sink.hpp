// LogSink: where a log's bytes go: a file opened for appending (reopened on demand, for
// logrotate's rename-then-SIGHUP), stdout or stderr. Writes are whole: a short write is
// continued, so lines from one call never interleave with another caller's.
#pragma once

#include <cstdint>
#include <mutex>
#include <string>
#include <string_view>

namespace rivet::app {

// What one LogSink::write did: `written` bytes reached the target; `error` is the errno that
// stopped the rest (ENOSPC: the disk is full), 0 when everything was written.
struct SinkWrite {
    size_t written = 0;
    int error = 0;
};

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
    std::string target() const {  // a copy: another thread may open() meanwhile
        std::lock_guard lock(mutex_);
        return target_;
    }
    // Continues short writes; stops at the first error (disk full, ...) and says how far it
    // got: the caller decides what is lost and how loud to be.
    SinkWrite write(std::string_view bytes);

private:
    void close_owned();
    mutable std::mutex mutex_;  // open/reopen against write: the writer may be another thread
    std::string target_;
    int fd_ = -1;
    bool owned_ = false;  // a file we opened (not stdout/stderr)
};

// A log target that fails (a full disk) is reported once per outage, not at every write nor
// only once per process: when writes start failing, and when one succeeds again.
class WriteOutage {
public:
    // After each write to `target`: `error` as in SinkWrite (0: it succeeded), `dropped` the
    // lines lost before this write, in all (counted by the caller). Returns the line to log,
    // or empty.
    std::string after_write(const std::string& target, int error, uint64_t dropped);

private:
    enum class State { Writing, Failing };
    State state_ = State::Writing;
    uint64_t dropped_before_ = 0;  // `dropped` as the outage began
};

}  // namespace rivet::app
