#include "app/service_notifier.hpp"

#include <time.h>
#include <unistd.h>

#include <charconv>
#include <cstdlib>

#include "app/operations/error_log.hpp"

namespace rivet::app {

namespace {

std::string_view variable(const char* name) {
    const char* v = std::getenv(name);
    return v ? std::string_view(v) : std::string_view();
}

std::optional<uint64_t> parse_number(std::string_view text) {
    uint64_t value = 0;
    auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), value);
    if (ec != std::errc() || end != text.data() + text.size() || text.empty()) return std::nullopt;
    return value;
}

// One line of the message: a status text with a newline would end its line early.
std::string one_line(std::string_view text) {
    std::string out(text);
    for (char& c : out)
        if (c == '\n' || c == '\r') c = ' ';
    return out;
}

uint64_t monotonic_usec() {
    timespec now{};
    clock_gettime(CLOCK_MONOTONIC, &now);
    return uint64_t(now.tv_sec) * 1'000'000 + uint64_t(now.tv_nsec) / 1'000;
}

}  // namespace

ServiceNotifier::ServiceNotifier()
    : ServiceNotifier(variable("NOTIFY_SOCKET"), variable("WATCHDOG_USEC"),
                      variable("WATCHDOG_PID")) {}

ServiceNotifier::ServiceNotifier(std::string_view notify_socket, std::string_view watchdog_usec,
                                 std::string_view watchdog_pid) {
    std::string problem;
    socket_ = net::NotifySocket(notify_socket, problem);
    if (!problem.empty()) log_warn("service manager: " + problem + "; it is told nothing");
    if (!socket_.is_open() || watchdog_usec.empty()) return;
    auto usec = parse_number(watchdog_usec);
    if (!usec || *usec == 0) {
        log_warn("service manager: WATCHDOG_USEC=" + std::string(watchdog_usec) +
                 " is not a number of microseconds; no watchdog pings");
        return;
    }
    if (!watchdog_pid.empty() && parse_number(watchdog_pid) != uint64_t(getpid()))
        return;  // the watchdog watches another process (sd_watchdog_enabled's rule)
    watchdog_ = std::chrono::microseconds(*usec);
}

void ServiceNotifier::ready(std::string_view status) {
    send("READY=1\nMAINPID=" + std::to_string(getpid()) + "\nSTATUS=" + one_line(status));
}

void ServiceNotifier::reloading(std::string_view status) {
    // MONOTONIC_USEC: systemd (Type=notify-reload, 253+) matches the reload it asked for by it.
    send("RELOADING=1\nMONOTONIC_USEC=" + std::to_string(monotonic_usec()) +
         "\nSTATUS=" + one_line(status));
}

void ServiceNotifier::stopping(std::string_view status) {
    send("STOPPING=1\nSTATUS=" + one_line(status));
}

void ServiceNotifier::status(std::string_view status) {
    send("STATUS=" + one_line(status));
}

void ServiceNotifier::main_pid(pid_t pid) {
    send("MAINPID=" + std::to_string(pid));
}

std::optional<std::chrono::microseconds> ServiceNotifier::watchdog() const {
    if (watchdog_.count() == 0) return std::nullopt;
    return watchdog_;
}

void ServiceNotifier::watch(std::vector<net::Loop*> loops) {
    if (watchdog_.count() == 0) return;
    heartbeat_ = std::make_unique<LoopHeartbeat>(std::move(loops));
    next_beat_ = Clock::now() + watchdog_ / 2;
    log_info("service manager: watchdog every " + std::to_string(watchdog_.count() / 1000) +
             " ms: pinged every half of it while every I/O loop answers");
}

void ServiceNotifier::unwatch() {
    heartbeat_.reset();
}

std::optional<ServiceNotifier::Clock::time_point> ServiceNotifier::next_beat() const {
    if (!heartbeat_) return std::nullopt;
    return next_beat_;
}

void ServiceNotifier::beat() {
    if (!heartbeat_) return;
    if (heartbeat_->all_alive()) send("WATCHDOG=1");
    const auto now = Clock::now();
    next_beat_ += watchdog_ / 2;
    if (next_beat_ <= now) next_beat_ = now + watchdog_ / 2;  // late (a busy machine): no burst
}

void ServiceNotifier::send(const std::string& message) {
    std::string e = socket_.send(message);
    if (!e.empty() && !failure_logged_.exchange(true))
        log_warn("service manager: " + e + " (said once; the server serves on)");
}

}  // namespace rivet::app
