// The error log: one process-wide log of what went wrong (and, at lower levels, what
// happened), with levels error < warn < info < debug. Lines look like nginx's:
//   2025/01/31 12:00:00 [error] handler for /x threw: ...
// Rare by nature, so each line is written at once under a lock: nothing is lost at a crash.
#pragma once

#include <atomic>
#include <string>
#include <string_view>

#include <rivet/operations.hpp>

#include "app/operations/log_sink.hpp"

namespace rivet::app {

class ErrorLog {
public:
    static ErrorLog& instance();

    std::string open(const std::string& target);  // see LogSink::open; "stderr" by default
    std::string reopen() { return sink_.reopen(); }
    void set_level(LogLevel level) { level_.store(level, std::memory_order_relaxed); }
    bool enabled(LogLevel level) const { return level <= level_.load(std::memory_order_relaxed); }
    void write(LogLevel level, std::string_view message);

private:
    ErrorLog();
    LogSink sink_;
    std::atomic<LogLevel> level_{LogLevel::Info};
};

inline void log_error(std::string_view m) {
    ErrorLog::instance().write(LogLevel::Error, m);
}
inline void log_warn(std::string_view m) {
    ErrorLog::instance().write(LogLevel::Warn, m);
}
inline void log_info(std::string_view m) {
    ErrorLog::instance().write(LogLevel::Info, m);
}

}  // namespace rivet::app
