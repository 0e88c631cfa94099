#include "app/operations/error_log.hpp"

#include <cstdio>
#include <ctime>

namespace rivet {

const char* log_level_name(LogLevel l) {
    switch (l) {
        case LogLevel::Error:
            return "error";
        case LogLevel::Warn:
            return "warn";
        case LogLevel::Info:
            return "info";
        case LogLevel::Debug:
            return "debug";
    }
    return "?";
}

}  // namespace rivet

namespace rivet::app {

ErrorLog& ErrorLog::instance() {
    static ErrorLog log;
    return log;
}

ErrorLog::ErrorLog() {
    sink_.open("stderr");
}

std::string ErrorLog::open(const std::string& target) {
    return sink_.open(target);
}

void ErrorLog::write(LogLevel level, std::string_view message) {
    if (!enabled(level)) return;
    time_t now = time(nullptr);
    tm t;
    localtime_r(&now, &t);
    char prefix[64];
    size_t n = strftime(prefix, sizeof prefix, "%Y/%m/%d %H:%M:%S", &t);
    n += size_t(std::snprintf(prefix + n, sizeof prefix - n, " [%s] ", log_level_name(level)));
    std::string line;
    line.reserve(n + message.size() + 1);
    line.append(prefix, n).append(message);
    if (message.empty() || message.back() != '\n') line.push_back('\n');
    sink_.write(line);
}

}  // namespace rivet::app
