#include "server/upgrade_request.hpp"

#include <signal.h>
#include <sys/stat.h>

#include <cerrno>
#include <charconv>
#include <chrono>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <optional>
#include <string_view>
#include <thread>

#include "server/config.hpp"
#include "server/pid_file.hpp"
#include "server/upgrade.hpp"

namespace rivet::server {

namespace {

constexpr const char* kUsage =
    "rivet: usage: rivet --upgrade (--pid-file PATH | --config FILE) [--timeout-ms N]\n";

// The default wait: the server's upgrade timeout, then the time it may take to stop a new
// process that was not ready (up to that one's drain), then a margin; only after that does the
// server rewrite the pid file with its verdict.
uint64_t default_wait_ms(const Config& server) {
    const auto& t = server.run.timeouts;
    return server.upgrade_timeout_ms + child_stop_timeout_ms(t.drain_grace_ms, t.drain_ms) + 5'000;
}

// Which file the pid file is now: a rewrite (by the new process, or by the old one after a
// failure) replaces it by a rename, so the inode changes.
struct FileIdentity {
    ino_t inode = 0;
    timespec modified{};
    bool operator==(const FileIdentity& o) const {
        return inode == o.inode && modified.tv_sec == o.modified.tv_sec &&
               modified.tv_nsec == o.modified.tv_nsec;
    }
};

FileIdentity identity(const std::string& path) {
    struct stat st {};
    if (stat(path.c_str(), &st) < 0) return {};
    return {st.st_ino, st.st_mtim};
}

bool alive(pid_t pid) {
    return kill(pid, 0) == 0 || errno == EPERM;
}

int fail(const std::string& why) {
    std::fprintf(stderr, "rivet: upgrade: %s\n", why.c_str());
    return 1;
}

}  // namespace

namespace {

// The hexadecimal mask on the line `name` of a /proc status file; nullopt when absent.
std::optional<uint64_t> status_mask(const std::string& path, std::string_view name) {
    std::ifstream status(path);
    std::string line;
    while (std::getline(status, line)) {
        if (!line.starts_with(name)) continue;
        size_t start = line.find_first_not_of(" \t", name.size());
        uint64_t value = 0;
        if (start == std::string::npos ||
            std::from_chars(line.data() + start, line.data() + line.size(), value, 16).ec !=
                std::errc())
            return std::nullopt;
        return value;
    }
    return std::nullopt;
}

}  // namespace

pid_t child_of(pid_t parent) {
    std::error_code ec;
    for (const auto& entry : std::filesystem::directory_iterator("/proc", ec)) {
        const std::string name = entry.path().filename().string();
        pid_t pid = 0;
        auto [end, err] = std::from_chars(name.data(), name.data() + name.size(), pid);
        if (err != std::errc() || end != name.data() + name.size()) continue;  // not a process
        // "pid (comm) state ppid ...": the name may hold spaces and ')', so from the last ')'.
        std::ifstream stat(entry.path() / "stat");
        std::string line;
        if (!std::getline(stat, line)) continue;  // gone meanwhile
        size_t close = line.rfind(')');
        if (close == std::string::npos) continue;
        long ppid = 0;  // after the state
        if (std::sscanf(line.c_str() + close + 1, " %*c %ld", &ppid) == 1 && ppid == parent)
            return pid;
    }
    return 0;
}

bool handles_sigusr2(pid_t pid) {
    const uint64_t bit = uint64_t(1) << (SIGUSR2 - 1);
    std::string proc = "/proc/" + std::to_string(pid);
    auto caught = status_mask(proc + "/status", "SigCgt:");
    if (!caught) return true;  // no /proc to ask
    if (*caught & bit) return true;
    // Blocked in the threads and taken by sigwait (App::run): a thread in sigwait shows the
    // signal unblocked while it waits, so any thread's mask tells.
    std::error_code ec;
    for (const auto& task : std::filesystem::directory_iterator(proc + "/task", ec))
        if (auto blocked = status_mask(task.path().string() + "/status", "SigBlk:");
            blocked && (*blocked & bit))
            return true;
    return false;
}

int run_upgrade_request(const std::vector<std::string>& args) {
    std::string pid_file, config_path;
    uint64_t timeout_ms = 0;  // 0: the server's upgrade timeout, plus a margin (below)
    for (size_t i = 0; i < args.size(); ++i) {
        const std::string& a = args[i];
        if (i + 1 >= args.size() || (a != "--pid-file" && a != "--config" && a != "--timeout-ms")) {
            std::fputs(kUsage, stderr);
            return 2;
        }
        const std::string& v = args[++i];
        if (a == "--pid-file") pid_file = v;
        if (a == "--config") config_path = v;
        if (a == "--timeout-ms") {
            auto r = std::from_chars(v.data(), v.data() + v.size(), timeout_ms);
            if (r.ec != std::errc() || r.ptr != v.data() + v.size() || timeout_ms == 0 ||
                timeout_ms > 3'600'000) {
                std::fprintf(stderr, "rivet: invalid value '%s' for --timeout-ms\n", v.c_str());
                return 2;
            }
        }
    }
    // Longer than the server waits for its new process, so that for one that hangs we hear
    // the server's verdict (it rewrites the pid file) rather than give up just before it.
    Config config = default_config();
    if (!config_path.empty()) {
        auto problems = apply_config_file(config_path, config);
        for (auto& p : problems) std::fprintf(stderr, "rivet: %s\n", p.c_str());
        if (!problems.empty()) return 2;
        if (pid_file.empty()) pid_file = config.pid_file;
        if (pid_file.empty()) {
            std::fprintf(stderr, "rivet: %s sets no server.pid_file\n", config_path.c_str());
            return 2;
        }
    }
    if (pid_file.empty()) {
        std::fputs(kUsage, stderr);
        return 2;
    }
    if (timeout_ms == 0) timeout_ms = default_wait_ms(config);

    std::string error;
    pid_t old_pid = read_pid_file(pid_file, error);
    if (!old_pid) return fail(error);
    FileIdentity before = identity(pid_file);
    if (!alive(old_pid))
        return fail("stale pid file " + pid_file + ": no process " + std::to_string(old_pid));
    if (!handles_sigusr2(old_pid))
        return fail("process " + std::to_string(old_pid) + " (from " + pid_file +
                    ") does not handle SIGUSR2: not a serving rivet; stale pid file?");
    // The server would refuse this SIGUSR2 with a log line, and the pid file would then tell
    // the other upgrade's end as if it were ours: say so now, and send nothing.
    if (pid_t starting = child_of(old_pid))
        return fail("an upgrade is already in progress (new process " + std::to_string(starting) +
                    "); pid " + std::to_string(old_pid) + " still serves: try again once it ends");
    if (kill(old_pid, SIGUSR2) < 0)
        return fail("cannot signal process " + std::to_string(old_pid) + ": " +
                    std::strerror(errno));

    // A short poll: this waits for another process's decision, seconds at most.
    auto deadline = std::chrono::steady_clock::now() + std::chrono::milliseconds(timeout_ms);
    while (std::chrono::steady_clock::now() < deadline) {
        std::this_thread::sleep_for(std::chrono::milliseconds(20));
        std::string ignored;
        pid_t now = read_pid_file(pid_file, ignored);
        if (now && now != old_pid && alive(now)) {
            std::printf("rivet: upgraded: pid %d -> %d (%d drains and exits)\n", int(old_pid),
                        int(now), int(old_pid));
            return 0;
        }
        if (now == old_pid && !(identity(pid_file) == before))
            return fail("the new process failed; pid " + std::to_string(old_pid) +
                        " still serves (its error log says why)");
        if (!alive(old_pid))
            return fail("process " + std::to_string(old_pid) +
                        " exited and no new process took over");
    }
    return fail("no new process served within " + std::to_string(timeout_ms) + " ms; pid " +
                std::to_string(old_pid) + (alive(old_pid) ? " still serves" : " is gone"));
}

}  // namespace rivet::server
