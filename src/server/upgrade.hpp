// In-place upgrade, nginx's USR2 model. On SIGUSR2 the serving process (the old one) forks and
// executes its binary again (the file now at the path it started from: the new version) with
// the same arguments, handing over its listening sockets through the systemd socket-activation
// protocol (server/socket_activation.hpp) and the write end of a pipe (RIVET_UPGRADE_READY_FD).
// The new process serves on the inherited sockets, then writes one byte there (signal_ready).
// On that byte the old process stops as on SIGTERM (lame-duck grace, then the drain); if the
// new one exits first, or is not ready within the timeout (then it is stopped: SIGTERM, then
// SIGKILL), the old one logs why and keeps serving. The listening sockets stay open throughout:
// both processes hold them.
#pragma once

#include <sys/types.h>

#include <cstdint>
#include <functional>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include "server/socket_activation.hpp"

namespace rivet::server {

class Upgrader {
public:
    struct Options {
        std::vector<std::string> argv;  // the command line to run again, argv[0] included
        std::string pid_file;           // rewritten after a failure, for `rivet --upgrade`
        uint64_t ready_timeout_ms = 30'000;
        // A new process that must go (not ready in time, or this one stops first) gets SIGTERM,
        // then SIGKILL after this long: it may serve already and have requests to finish.
        uint64_t child_stop_timeout_ms = 10'000;
    };
    // Takes the binary's path now, from argv[0] as the shell found it (made absolute against
    // the working directory, or searched in PATH), symbolic links kept: a binary replaced later
    // by a rename, or a symbolic link repointed, names the new file. /proc/self/exe when
    // argv[0] does not lead back to this binary.
    explicit Upgrader(Options options);
    ~Upgrader();  // stop_waiting()
    // Ends the waiting thread (on_handed_over is not called after it returns). A new process
    // still starting is stopped first (SIGTERM, SIGKILL after child_stop_timeout_ms; logged):
    // it must not serve on alone after the service was told to stop.
    void stop_waiting();
    Upgrader(const Upgrader&) = delete;
    Upgrader& operator=(const Upgrader&) = delete;

    // From App::run's thread, on SIGUSR2: starts the new process with `listeners` as its
    // inherited ones (named "http", "admin" and "https" in LISTEN_FDNAMES) and returns; a
    // thread waits for its answer. Refused (logged) while an upgrade is in progress, after this
    // process has handed over, or without a plain listener.
    void start(const InheritedListeners& listeners);

    // Called from the waiting thread with the new process's pid once it serves, before this
    // one stops (App::hand_over: stop accepting now, /healthz stays 200, the service manager
    // told the new main pid). Set before start().
    // It returns false when this process is already stopping: the new one is stopped too.
    void on_handed_over(std::function<bool(pid_t)> fn) { on_handed_over_ = std::move(fn); }

    const std::string& binary() const { return binary_; }

private:
    enum class State { Idle, Starting, HandedOver };
    void wait_for(pid_t child, int ready_fd);
    void failed(const std::string& why);

    Options options_;
    std::string binary_;
    int cancel_[2] = {-1, -1};  // written by the destructor: the waiting thread returns
    std::mutex mutex_;
    State state_ = State::Idle;  // under mutex_
    pid_t child_ = 0;            // under mutex_: the new process while Starting or HandedOver
    std::thread waiter_;
    std::function<bool(pid_t)> on_handed_over_;
};

// Options::child_stop_timeout_ms for a server with these drain settings: the lame duck and the
// drain that its own stop takes, and a second for the rest.
inline uint64_t child_stop_timeout_ms(uint64_t drain_grace_ms, uint64_t drain_ms) {
    return drain_grace_ms + drain_ms + 1'000;
}

// The new process's side: the descriptor from RIVET_UPGRADE_READY_FD (removed from the
// environment and made close-on-exec), -1 when there is none or it is not a pipe.
int take_ready_fd();
// Tells the old process that this one serves: one byte, then the descriptor is closed.
void signal_ready(int fd);

}  // namespace rivet::server
