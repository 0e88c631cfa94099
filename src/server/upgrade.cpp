#include "server/upgrade.hpp"

#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <chrono>
#include <climits>
#include <cstdlib>
#include <cstring>

#include "app/operations/error_log.hpp"
#include "server/pid_file.hpp"

extern char** environ;

namespace rivet::server {

namespace {

constexpr const char* kReadyVariable = "RIVET_UPGRADE_READY_FD";

std::string proc_self_exe() {
    char buf[PATH_MAX];
    ssize_t n = readlink("/proc/self/exe", buf, sizeof buf - 1);
    if (n <= 0) return "";
    std::string path(buf, size_t(n));
    const std::string deleted = " (deleted)";
    if (path.size() > deleted.size() && path.ends_with(deleted))
        path.resize(path.size() - deleted.size());
    return path;
}

// An executable regular file that is, at startup, the very file this process runs.
bool runs_us(const std::string& path) {
    struct stat candidate {};
    struct stat self {};
    return access(path.c_str(), X_OK) == 0 && stat(path.c_str(), &candidate) == 0 &&
           S_ISREG(candidate.st_mode) && stat("/proc/self/exe", &self) == 0 &&
           candidate.st_dev == self.st_dev && candidate.st_ino == self.st_ino;
}

std::string absolute(const std::string& path) {
    if (path.starts_with('/')) return path;
    char cwd[PATH_MAX];
    if (!getcwd(cwd, sizeof cwd)) return "";
    return std::string(cwd) + "/" + path;
}

// The path this process was started from, as execvp found it, symbolic links kept: with a
// symlink-swap install (/usr/local/bin/rivet -> /opt/rivet-1.2/rivet, repointed to 1.3) the
// upgrade runs what the link names then. /proc/self/exe (links resolved) only when argv[0]
// does not lead back to this binary (a launcher that set another argv[0]).
std::string binary_path(const std::string& argv0) {
    std::string found;
    if (argv0.find('/') != std::string::npos) {
        found = absolute(argv0);
    } else if (!argv0.empty()) {
        const char* env = std::getenv("PATH");
        std::string search = env ? env : "/bin:/usr/bin";  // execvp's default
        for (size_t start = 0; found.empty() && start <= search.size();) {
            size_t end = std::min(search.find(':', start), search.size());
            std::string dir = search.substr(start, end - start);  // empty: the working directory
            std::string candidate = (dir.empty() ? "." : dir) + "/" + argv0;
            struct stat st {};
            if (access(candidate.c_str(), X_OK) == 0 && stat(candidate.c_str(), &st) == 0 &&
                S_ISREG(st.st_mode))
                found = absolute(candidate);
            start = end + 1;
        }
    }
    if (!found.empty() && runs_us(found)) return found;
    return proc_self_exe();
}

// Everything the child needs, prepared before fork(): after it, in a copy of a multithreaded
// process, only async-signal-safe calls are allowed (no allocation, no locks).
struct ExecPlan {
    const char* path = nullptr;
    std::vector<char*> argv;
    std::vector<std::string> env_strings;
    std::vector<char*> envp;
    char* pid_digits = nullptr;  // inside the LISTEN_PID= string, room for 20 digits
    std::vector<int> sources;    // the listeners, then the ready pipe's write end
    std::vector<int> temporary;  // same size: where the sources are parked while moving

    ExecPlan(const std::string& binary, std::vector<std::string>& args,
             const InheritedListeners& listeners, int ready_fd) {
        path = binary.c_str();
        for (auto& a : args) argv.push_back(a.data());
        argv.push_back(nullptr);
        for (const auto* list : {&listeners.http, &listeners.admin, &listeners.https})
            sources.insert(sources.end(), list->begin(), list->end());
        size_t count = sources.size();
        sources.push_back(ready_fd);
        temporary.resize(sources.size());
        for (char** e = environ; *e; ++e) {
            std::string_view v(*e);
            // WATCHDOG_PID names us: without it the watchdog is the new process's (sd_notify's
            // rule), which it is once it serves and we hand over. NOTIFY_SOCKET and
            // WATCHDOG_USEC pass as they are.
            if (v.starts_with("LISTEN_PID=") || v.starts_with("LISTEN_FDS=") ||
                v.starts_with("LISTEN_FDNAMES=") || v.starts_with(kReadyVariable) ||
                v.starts_with("WATCHDOG_PID="))
                continue;
            env_strings.emplace_back(v);
        }
        env_strings.push_back("LISTEN_FDS=" + std::to_string(count));
        env_strings.push_back("LISTEN_FDNAMES=" + listen_fdnames(listeners));
        env_strings.push_back(std::string(kReadyVariable) + "=" + std::to_string(3 + count));
        env_strings.push_back("LISTEN_PID=" + std::string(20, '\0'));
        for (auto& s : env_strings) envp.push_back(s.data());
        envp.push_back(nullptr);
        pid_digits = env_strings.back().data() + std::strlen("LISTEN_PID=");
    }

    // In the child: the sources onto 3, 4, ... (without close-on-exec), nothing else open
    // above them, LISTEN_PID set to our pid, then the binary. Async-signal-safe calls only.
    [[noreturn]] void exec_in_child() {
        sigset_t none;
        sigemptyset(&none);
        sigprocmask(SIG_SETMASK, &none, nullptr);  // App::run blocked the stop signals
        signal(SIGPIPE, SIG_DFL);
        int count = int(sources.size());
        int above = 3 + count;  // park every source above all targets first: no overlap
        for (int fd : sources) above = fd >= above ? fd + 1 : above;
        for (int i = 0; i < count; ++i)
            if ((temporary[size_t(i)] = fcntl(sources[size_t(i)], F_DUPFD_CLOEXEC, above)) < 0)
                _exit(126);
        for (int i = 0; i < count; ++i)  // dup2's copy does not keep close-on-exec
            if (dup2(temporary[size_t(i)], 3 + i) < 0) _exit(126);
        syscall(SYS_close_range, unsigned(3 + count), ~0u, 0u);  // connections, loops, parked
        char reversed[20];
        int n = 0;
        for (pid_t v = getpid(); v > 0 || n == 0; v /= 10) reversed[n++] = char('0' + v % 10);
        char* out = pid_digits;
        while (n > 0) *out++ = reversed[--n];
        *out = '\0';
        execve(path, argv.data(), envp.data());
        _exit(127);
    }
};

std::string describe_status(int status, const std::string& binary) {
    if (WIFEXITED(status)) {
        std::string s = "exited with status " + std::to_string(WEXITSTATUS(status));
        if (WEXITSTATUS(status) == 127) s += " (could " + binary + " be executed?)";
        if (WEXITSTATUS(status) == 126)
            s += " (it could not move the listening sockets to descriptors 3 and up before "
                 "executing " +
                 binary + ": too many open descriptors for RLIMIT_NOFILE? Or " + binary +
                 " is not executable)";
        return s;
    }
    if (WIFSIGNALED(status)) return "was killed by signal " + std::to_string(WTERMSIG(status));
    return "ended (status " + std::to_string(status) + ")";
}

// SIGTERM (it may serve already: it drains what it accepted), then SIGKILL when it has not
// exited within `limit_ms`; reaped either way. Says how it ended.
std::string stop_child(pid_t child, int exited, uint64_t limit_ms, const std::string& binary) {
    kill(child, SIGTERM);
    auto deadline = std::chrono::steady_clock::now() + std::chrono::milliseconds(limit_ms);
    int status = 0;
    while (waitpid(child, &status, WNOHANG) == 0) {
        auto left = std::chrono::duration_cast<std::chrono::milliseconds>(
            deadline - std::chrono::steady_clock::now());
        if (left.count() <= 0) {
            kill(child, SIGKILL);
            waitpid(child, nullptr, 0);
            return "was killed (SIGKILL) after not exiting within " + std::to_string(limit_ms) +
                   " ms of SIGTERM";
        }
        if (exited >= 0) {  // wakes at its exit; without a pidfd, look again every 20 ms
            pollfd p{exited, POLLIN, 0};
            poll(&p, 1, int(left.count()));
        } else {
            poll(nullptr, 0, int(std::min<int64_t>(left.count(), 20)));
        }
    }
    return "was stopped (SIGTERM): it " + describe_status(status, binary);
}

}  // namespace

Upgrader::Upgrader(Options options)
    : options_(std::move(options)),
      binary_(binary_path(options_.argv.empty() ? std::string() : options_.argv[0])) {
    if (pipe2(cancel_, O_CLOEXEC) < 0) cancel_[0] = cancel_[1] = -1;
}

Upgrader::~Upgrader() {
    stop_waiting();
    for (int fd : cancel_)
        if (fd >= 0) close(fd);
}

void Upgrader::stop_waiting() {
    if (!waiter_.joinable()) return;
    if (cancel_[1] >= 0) {
        char byte = 0;
        [[maybe_unused]] ssize_t n = write(cancel_[1], &byte, 1);
    }
    waiter_.join();
}

void Upgrader::start(const InheritedListeners& listeners) {
    std::lock_guard lock(mutex_);
    if (state_ == State::Starting) {
        app::log_warn("SIGUSR2: upgrade refused: one is in progress (new process " +
                      std::to_string(child_) + ")");
        return;
    }
    if (state_ == State::HandedOver) {
        app::log_warn("SIGUSR2: upgrade refused: this process already handed over to pid " +
                      std::to_string(child_) + " and is draining");
        return;
    }
    if (binary_.empty() || listeners.http.empty()) {
        app::log_error("upgrade failed: " +
                       std::string(binary_.empty() ? "the binary's path is unknown"
                                                   : "no listening socket to hand over") +
                       "; still serving");
        return;
    }
    if (waiter_.joinable()) waiter_.join();  // the last upgrade's, finished
    int ready[2];
    if (pipe2(ready, O_CLOEXEC) < 0) {
        app::log_error(std::string("upgrade failed: pipe: ") + std::strerror(errno));
        return;
    }
    fcntl(ready[0], F_SETFL, O_NONBLOCK);  // the read after a timeout must not block
    std::vector<std::string> args = options_.argv;
    ExecPlan plan(binary_, args, listeners, ready[1]);
    pid_t child = fork();
    if (child == 0) plan.exec_in_child();
    int err = errno;
    close(ready[1]);
    if (child < 0) {
        close(ready[0]);
        app::log_error(std::string("upgrade failed: fork: ") + std::strerror(err) +
                       "; still serving");
        return;
    }
    state_ = State::Starting;
    child_ = child;
    app::log_info("upgrade: started " + binary_ + " as pid " + std::to_string(child) + " with " +
                  std::to_string(listeners.size()) + " listening sockets; waiting for it to serve");
    waiter_ = std::thread([this, child, fd = ready[0]] { wait_for(child, fd); });
}

void Upgrader::wait_for(pid_t child, int ready_fd) {
    // Its exit, as a descriptor: poll() then sees the end of the child even when a descendant
    // of it still holds the pipe's write end.
    int exited = int(syscall(SYS_pidfd_open, child, 0));
    auto deadline =
        std::chrono::steady_clock::now() + std::chrono::milliseconds(options_.ready_timeout_ms);
    pollfd fds[3] = {{ready_fd, POLLIN, 0}, {exited, POLLIN, 0}, {cancel_[0], POLLIN, 0}};
    enum class Answer { Waiting, Ready, Exited, TimedOut, Cancelled } answer = Answer::Waiting;
    while (answer == Answer::Waiting) {
        auto left = std::chrono::duration_cast<std::chrono::milliseconds>(
            deadline - std::chrono::steady_clock::now());
        int rc = poll(fds, 3, int(std::max<int64_t>(0, left.count())));
        if (rc < 0 && errno == EINTR) continue;
        if (rc == 0) {
            // A byte that came just after poll gave up still counts.
            char byte = 0;
            answer =
                fds[0].fd >= 0 && read(ready_fd, &byte, 1) == 1 ? Answer::Ready : Answer::TimedOut;
        } else if (rc < 0) {
            answer = Answer::TimedOut;
        } else if (fds[2].revents) {
            answer = Answer::Cancelled;  // this process is stopping: nothing more to decide
        } else {
            if (fds[0].revents) {
                char byte = 0;
                ssize_t n = read(ready_fd, &byte, 1);
                if (n == 1) {
                    answer = Answer::Ready;
                } else if (n == 0 || (errno != EINTR && errno != EAGAIN)) {
                    fds[0].fd = -1;  // closed without a word: its exit tells the rest
                    if (exited < 0) answer = Answer::Exited;  // no pidfd: take it as ending
                }
            }
            if (answer == Answer::Waiting && fds[1].revents) answer = Answer::Exited;
        }
    }
    close(ready_fd);
    struct ClosePidfd {
        int fd;
        ~ClosePidfd() {
            if (fd >= 0) close(fd);
        }
    } close_exited{exited};
    int status = 0;
    switch (answer) {
        case Answer::Ready: {
            if (on_handed_over_ && !on_handed_over_(child)) {
                // Told to stop (an outside SIGTERM) while the new process started: the stop was
                // meant for the service, so the new process goes too.
                app::log_warn("upgrade: the new process (pid " + std::to_string(child) +
                              ") is ready, but this one is stopping: stopping it too");
                std::string how =
                    stop_child(child, exited, options_.child_stop_timeout_ms, binary_);
                app::log_warn("upgrade: the new process (pid " + std::to_string(child) + ") " +
                              how);
                std::lock_guard lock(mutex_);
                state_ = State::Idle;
                child_ = 0;
                return;
            }
            {
                std::lock_guard lock(mutex_);
                state_ = State::HandedOver;
            }
            app::log_info("upgrade: the new process (pid " + std::to_string(child) +
                          ") is serving; pid " + std::to_string(getpid()) + " drains and exits");
            kill(getpid(), SIGTERM);  // App::run stops as on any SIGTERM
            return;
        }
        case Answer::Exited:
            waitpid(child, &status, 0);
            return failed("the new process " + describe_status(status, binary_));
        case Answer::TimedOut: {  // it goes, we stay
            std::string how = stop_child(child, exited, options_.child_stop_timeout_ms, binary_);
            return failed("the new process was not ready within " +
                          std::to_string(options_.ready_timeout_ms) + " ms and " + how);
        }
        case Answer::Cancelled: {
            // This process stops while the new one starts: left alone, it would serve on as an
            // orphan that nobody asked for (the stop was meant for the service).
            app::log_warn("upgrade: stopping while the new process (pid " + std::to_string(child) +
                          ") is still starting: stopping it too");
            std::string how = stop_child(child, exited, options_.child_stop_timeout_ms, binary_);
            app::log_warn("upgrade: the new process (pid " + std::to_string(child) + ") " + how);
            std::lock_guard lock(mutex_);
            state_ = State::Idle;
            child_ = 0;
            return;
        }
        case Answer::Waiting:
            return;
    }
}

void Upgrader::failed(const std::string& why) {
    app::log_error("upgrade failed: " + why + "; still serving");
    // A new pid file, same pid: how `rivet --upgrade` learns of the failure.
    if (!options_.pid_file.empty())
        if (auto e = write_pid_file(options_.pid_file, getpid()); !e.empty()) app::log_error(e);
    std::lock_guard lock(mutex_);
    state_ = State::Idle;
    child_ = 0;
}

int take_ready_fd() {
    const char* v = std::getenv(kReadyVariable);
    if (!v) return -1;
    int fd = std::atoi(v);
    unsetenv(kReadyVariable);
    struct stat st {};
    if (fd < 3 || fstat(fd, &st) < 0 || !S_ISFIFO(st.st_mode)) {
        app::log_warn(std::string(kReadyVariable) + "=" + std::to_string(fd) +
                      " is not a pipe; ignored");
        return -1;
    }
    fcntl(fd, F_SETFD, FD_CLOEXEC);
    return fd;
}

void signal_ready(int fd) {
    if (fd < 0) return;
    char byte = 'R';
    [[maybe_unused]] ssize_t n = write(fd, &byte, 1);
    close(fd);
}

}  // namespace rivet::server
