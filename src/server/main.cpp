// The rivet executable: flags and configuration file -> App with the demo routes -> serve
// until SIGINT/SIGTERM; SIGHUP re-reads the configuration file.
#include <unistd.h>
#include <stdexcept>

#include <cstdio>
#include <exception>

#include "app/operations/error_log.hpp"
#include "server/command_line.hpp"
#include "server/demo_routes.hpp"
#include "server/healthcheck.hpp"
#include "server/pid_file.hpp"
#include "server/privileges.hpp"
#include "server/socket_activation.hpp"
#include "server/startup_check.hpp"
#include "server/tls_check.hpp"
#include "server/upgrade.hpp"
#include "server/upgrade_request.hpp"

namespace {

using rivet::server::CommandLine;

// What a reload cannot change: said once in the error log, and otherwise ignored.
void warn_fixed_settings(const CommandLine& now, const CommandLine& next) {
    auto warn = [](const char* what) {
        rivet::app::log_warn(std::string(what) + " changes only at a restart; kept as it was");
    };
    if (next.run.host != now.run.host || next.run.port != now.run.port)
        warn("the listening address (server.host, server.port)");
    if (next.run.threads != now.run.threads) warn("server.io_threads");
    if (next.run.workers != now.run.workers || next.run.queue != now.run.queue)
        warn("the worker pool (threading.*)");
    if (next.run.ops.admin.admin_port != now.run.ops.admin.admin_port ||
        next.run.ops.admin.admin_host != now.run.ops.admin.admin_host)
        warn("the admin listener (metrics.admin_host, metrics.admin_port)");
    if (next.demo.root != now.demo.root) warn("static.root");
    if (next.demo.files.dot_files != now.demo.files.dot_files) warn("static.dot_files");
    if (next.demo.files.listing_max_entries != now.demo.files.listing_max_entries)
        warn("static.listing_max_entries");
    if (next.user != now.user) warn("server.user");
    if (next.run.proxy_protocol != now.run.proxy_protocol ||
        next.run.proxy_trusted != now.run.proxy_trusted)
        warn("the PROXY protocol (server.proxy_protocol, server.proxy_trusted)");
    if (next.run.http2 != now.run.http2) warn("server.http2");
    if (next.pid_file != now.pid_file) warn("server.pid_file");
    if (next.demo.compression != now.demo.compression) warn("compression.enabled");
    const auto& tls_now = now.run.tls;
    const auto& tls_next = next.run.tls;
    if (tls_next.certificates.empty() != tls_now.certificates.empty() ||
        tls_next.host != tls_now.host || tls_next.port != tls_now.port)
        warn("HTTPS being on or off, and its address (tls.host, tls.port)");
    if (next.cache.enabled != now.cache.enabled ||
        next.cache.max_size_mb != now.cache.max_size_mb ||
        next.cache.ttl_seconds != now.cache.ttl_seconds)
        warn("the file cache (cache.*)");
}

}  // namespace

int main(int argc, char** argv) {
    std::vector<std::string> args(argv + 1, argv + argc);
    if (!args.empty() && args[0] == "--healthcheck")
        return rivet::server::run_healthcheck({args.begin() + 1, args.end()});
    if (!args.empty() && args[0] == "--upgrade")
        return rivet::server::run_upgrade_request({args.begin() + 1, args.end()});
    auto cl = rivet::server::parse_command_line(args);
    switch (cl.action) {
        case CommandLine::Action::Help:
            std::fputs(rivet::server::usage().c_str(), stdout);
            return 0;
        case CommandLine::Action::Version:
            std::fputs(rivet::server::version_line().c_str(), stdout);
            return 0;
        case CommandLine::Action::Error:
            std::fprintf(stderr, "rivet: %s\n", cl.error.c_str());
            return 2;
        case CommandLine::Action::CheckConfig: {
            std::printf("%s\n", rivet::server::effective_config(cl).dump(2).c_str());
            const char* which =
                cl.config_path.empty() ? "(defaults and flags)" : cl.config_path.c_str();
            auto problems = rivet::server::check_startup(cl);
            for (auto& p : rivet::server::check_tls_files(cl.run.tls)) problems.push_back(p);
            for (const auto& p : problems) std::fprintf(stderr, "rivet: %s\n", p.c_str());
            if (!problems.empty()) {
                std::fprintf(stderr, "rivet: configuration %s is not usable\n", which);
                return 2;
            }
            std::fprintf(stderr, "rivet: configuration %s is valid\n", which);
            return 0;
        }
        case CommandLine::Action::Serve:
            break;
    }
    rivet::server::TargetUser user;
    if (!cl.user.empty()) {
        std::string error;
        user = rivet::server::resolve_user(cl.user, error);
        if (!error.empty()) {
            std::fprintf(stderr, "rivet: %s\n", error.c_str());
            return 2;
        }
    }
    // Listeners handed over by systemd or by the process we upgrade (server/upgrade.hpp).
    std::string inherit_error;
    auto inherited = rivet::server::take_inherited_listeners(inherit_error);
    if (!inherit_error.empty()) {
        std::fprintf(stderr, "rivet: %s\n", inherit_error.c_str());
        return 1;
    }
    int ready_fd = rivet::server::take_ready_fd();
    cl.run.listen_fds = inherited.http;
    if (cl.run.ops.admin.admin_port != 0) {
        cl.run.admin_listen_fds = inherited.admin;
    } else {
        for (int fd : inherited.admin) close(fd);  // the admin endpoints are on the main port now
    }
    if (!cl.run.tls.certificates.empty()) {
        cl.run.tls_listen_fds = inherited.https;
    } else {
        for (int fd : inherited.https) close(fd);  // HTTPS is off now
    }
    // A new process that must go gets what our own stop gives: the lame duck, then the drain.
    const auto& t = cl.run.timeouts;
    rivet::server::Upgrader upgrader(
        {{argv, argv + argc},
         cl.pid_file,
         cl.upgrade_timeout_ms,
         rivet::server::child_stop_timeout_ms(t.drain_grace_ms, t.drain_ms)});
    try {
        rivet::App app;
        rivet::server::apply_cache_options(cl);
        rivet::server::add_demo_routes(app, cl.demo);
        CommandLine current = cl;
        // On the main thread, from App::run's signal loop: the loops keep serving meanwhile.
        cl.run.on_reload = [&app, &args, &current] {
            auto next = rivet::server::parse_command_line(args);
            if (next.action != CommandLine::Action::Serve) {
                rivet::app::log_error("reload: configuration refused, the old one stays: " +
                                      next.error);
                app.reload_refused();
                return;
            }
            warn_fixed_settings(current, next);
            if (auto e = app.reconfigure(next.run); !e.empty())
                rivet::app::log_error("reload: " + e);
            else
                rivet::app::log_info("reload: configuration " + next.config_path + " applied");
            current = next;
        };
        upgrader.on_handed_over([&app](pid_t child) { return app.hand_over(child); });
        struct StopWaiting {  // before `app` goes: the waiting thread calls into it
            rivet::server::Upgrader& upgrader;
            ~StopWaiting() { upgrader.stop_waiting(); }
        } stop_waiting{upgrader};
        cl.run.on_upgrade = [&app, &upgrader] {
            upgrader.start(
                {app.listening_fds(), app.admin_listening_fds(), app.tls_listening_fds()});
        };
        if (!cl.user.empty()) {
            // After binding (ports below 1024 need root) and opening the logs, before any loop
            // accepts: no request is ever served as root. The workers run already: glibc's
            // setuid changes every thread's ids at once.
            cl.run.on_bound = [&user] {
                if (auto e = rivet::server::drop_privileges(user); !e.empty())
                    throw std::runtime_error("--user " + user.name + ": " + e);
                if (!user.already)
                    rivet::app::log_info("running as user " + user.name + " (uid " +
                                         std::to_string(user.uid) + ", gid " +
                                         std::to_string(user.gid) + ")");
            };
        } else if (geteuid() == 0) {
            // Where the error log will go, so the warning is found with the rest.
            rivet::app::ErrorLog::instance().open(cl.run.ops.log.error_log);
            rivet::app::ErrorLog::instance().set_level(cl.run.ops.log.level);
            rivet::app::log_warn(
                "running as root: use --user (server.user) to serve as an unprivileged user");
        }
        // Once serving, as who we serve as: the pid file, then the word to the process we
        // replace (its cue to drain).
        cl.run.on_started = [&cl, ready_fd] {
            if (!cl.pid_file.empty())
                if (auto e = rivet::server::write_pid_file(cl.pid_file, getpid()); !e.empty())
                    throw std::runtime_error(e);
            rivet::server::signal_ready(ready_fd);
        };
        app.run(cl.run);
    } catch (const std::exception& e) {
        std::fprintf(stderr, "rivet: %s\n", e.what());
        if (!cl.pid_file.empty()) rivet::server::remove_pid_file_if_ours(cl.pid_file, getpid());
        return 1;
    }
    if (!cl.pid_file.empty()) rivet::server::remove_pid_file_if_ours(cl.pid_file, getpid());
    return 0;
}
