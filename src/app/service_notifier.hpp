// What App::run tells the service manager that started it with $NOTIFY_SOCKET (systemd's
// Type=notify; the sd_notify(3) protocol, sent by net::NotifySocket): READY=1 with MAINPID= once
// every listener serves, RELOADING=1 (with MONOTONIC_USEC=) then READY=1 around a reload,
// STOPPING=1 when the stop begins, STATUS= lines that say what the server does, and WATCHDOG=1
// at half of $WATCHDOG_USEC for as long as every I/O loop runs its probes (LoopHeartbeat). With no
// $NOTIFY_SOCKET nothing is sent; a send that fails is logged once and never stops the server.
#pragma once

#include <sys/types.h>

#include <atomic>
#include <chrono>
#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "app/loop_heartbeat.hpp"
#include "net/notify_socket.hpp"

namespace rivet::app {

class ServiceNotifier {
public:
    using Clock = std::chrono::steady_clock;

    // From the environment: NOTIFY_SOCKET, and WATCHDOG_USEC when WATCHDOG_PID is unset or ours
    // (a process started by ours, as an in-place upgrade's, inherits the variables).
    ServiceNotifier();
    // For tests and callers that read the environment themselves.
    ServiceNotifier(std::string_view notify_socket, std::string_view watchdog_usec,
                    std::string_view watchdog_pid);

    bool is_connected() const { return socket_.is_open(); }

    void ready(std::string_view status);      // READY=1, MAINPID= (ours), STATUS=
    void reloading(std::string_view status);  // RELOADING=1, MONOTONIC_USEC=, STATUS=
    void stopping(std::string_view status);   // STOPPING=1, STATUS=
    void status(std::string_view status);     // STATUS=
    // MAINPID=: another process (the new one of an in-place upgrade) is the service now. From
    // any thread.
    void main_pid(pid_t pid);

    // The watchdog: the interval systemd asked for (WatchdogSec=), none when it asked for none
    // or the watchdog is another process's.
    std::optional<std::chrono::microseconds> watchdog() const;
    // Starts probing `loops`; nothing without a watchdog (or a socket).
    void watch(std::vector<net::Loop*> loops);
    void unwatch();  // no more pings: stopping, or handed over
    // When beat() is due; none while not watching.
    std::optional<Clock::time_point> next_beat() const;
    // At next_beat(): WATCHDOG=1 when every loop ran the probe posted at the last beat (a held
    // loop stops the pings, and systemd restarts the service); then the next beat is set.
    void beat();

private:
    void send(const std::string& message);

    net::NotifySocket socket_;
    std::chrono::microseconds watchdog_{0};  // 0: none for us
    std::unique_ptr<LoopHeartbeat> heartbeat_;
    Clock::time_point next_beat_{};
    std::atomic<bool> failure_logged_{false};
};

}  // namespace rivet::app
