// The process around the App: App::run's signals (SIGINT/SIGTERM stop, SIGHUP reloads, SIGUSR2
// upgrades), the lame duck, the hand-over to an upgrade's new process, and what a service
// manager is told of all that (app/service_notifier.hpp: sd_notify, the watchdog).
#include <pthread.h>
#include <signal.h>

#include <chrono>
#include <cstdio>
#include <string>
#include <vector>

#include "app/app_impl.hpp"
#include "app/operations/error_log.hpp"
#include "app/tls_options.hpp"

namespace rivet {

namespace {

// The lame-duck period's wait: until the grace runs out or a second SIGINT/SIGTERM says not to
// wait. SIGHUP still reopens the logs meanwhile.
void wait_out_lame_duck(uint64_t grace_ms, const sigset_t& signals, app::Operations& ops) {
    auto end = std::chrono::steady_clock::now() + std::chrono::milliseconds(grace_ms);
    for (;;) {
        auto left = std::chrono::duration_cast<std::chrono::nanoseconds>(
            end - std::chrono::steady_clock::now());
        if (left.count() <= 0) return;
        timespec wait{time_t(left.count() / 1'000'000'000), long(left.count() % 1'000'000'000)};
        int sig = sigtimedwait(&signals, nullptr, &wait);
        if (sig == SIGHUP) {
            if (auto e = ops.reopen_logs(); !e.empty()) app::log_error("reopening logs: " + e);
        } else if (sig == SIGINT || sig == SIGTERM) {
            app::log_info("signal " + std::to_string(sig) + " again: draining now");
            return;
        } else if (sig == SIGUSR2) {
            app::log_error("upgrade refused: this process is stopping");
        }  // else EAGAIN (the grace is over) or EINTR: the loop looks at the time again
    }
}

// SIGUSR2, as for nginx: start a new binary on our listening sockets (the owner's on_upgrade).
void request_upgrade(const RunOptions& options) {
    if (!options.on_upgrade) {
        app::log_warn("SIGUSR2: in-place upgrades are not configured (RunOptions::on_upgrade)");
        return;
    }
    try {
        options.on_upgrade();
    } catch (const std::exception& e) {  // a failed upgrade leaves us serving
        app::log_error(std::string("SIGUSR2: ") + e.what());
    }
}

// The next of `signals`; meanwhile the watchdog's beats, each when it is due. This thread
// beats, not one of its own: it waits for signals anyway. -1 when waiting failed.
int next_signal(const sigset_t& signals, app::ServiceNotifier& notifier) {
    for (;;) {
        auto due = notifier.next_beat();
        if (!due) {
            int sig = 0;
            return sigwait(&signals, &sig) == 0 ? sig : -1;
        }
        auto left = std::chrono::duration_cast<std::chrono::nanoseconds>(
            *due - app::ServiceNotifier::Clock::now());
        if (left.count() <= 0) {
            notifier.beat();
            continue;
        }
        timespec wait{time_t(left.count() / 1'000'000'000), long(left.count() % 1'000'000'000)};
        int sig = sigtimedwait(&signals, nullptr, &wait);
        if (sig > 0) return sig;
    }  // EAGAIN: a beat is due; EINTR: look again
}

std::string serving_status(const engine::Server& server) {
    return "serving http://" + app::url_host(server.host()) + ":" + std::to_string(server.port()) +
           " (" + std::to_string(server.threads()) + " I/O threads)";
}

}  // namespace

bool App::hand_over(pid_t successor_pid) {
    if (!impl_->server) throw std::logic_error("the app is not running");
    auto serving = Impl::Ending::Serving;
    if (!impl_->ending.compare_exchange_strong(serving, Impl::Ending::HandedOver)) return false;
    // The service is the successor's now: systemd follows it, not our exit (with
    // NotifyAccess=main only this process, the main one until now, may say so).
    if (successor_pid > 0 && impl_->notifier) impl_->notifier->main_pid(successor_pid);
    impl_->shutdown.trigger();
    impl_->server->begin_handover();
    if (impl_->admin_server) impl_->admin_server->begin_handover();
    return true;
}

void App::run(const RunOptions& options) {
    // Threads inherit the mask: only this one takes SIGINT/SIGTERM, through sigwait.
    sigset_t stop_signals;
    sigemptyset(&stop_signals);
    sigaddset(&stop_signals, SIGINT);
    sigaddset(&stop_signals, SIGTERM);
    sigaddset(&stop_signals, SIGHUP);
    sigaddset(&stop_signals, SIGUSR2);
    pthread_sigmask(SIG_BLOCK, &stop_signals, nullptr);
    signal(SIGPIPE, SIG_IGN);
    start(options);
    if (!impl_->notifier) impl_->notifier = std::make_unique<app::ServiceNotifier>();
    app::ServiceNotifier& notifier = *impl_->notifier;
    if (options.on_started) {
        try {
            options.on_started();
        } catch (...) {
            stop();
            throw;
        }
    }
    // Every listener serves, as the user we serve as (on_bound dropped privileges), and the pid
    // file is written: the service is up.
    notifier.ready(serving_status(*impl_->server));
    std::vector<net::Loop*> loops;
    for (unsigned i = 0; i < impl_->server->threads(); ++i)
        loops.push_back(&impl_->server->loop(i));
    if (impl_->admin_server) loops.push_back(&impl_->admin_server->loop(0));
    notifier.watch(std::move(loops));
    int sig = 0;
    // SIGHUP, as for nginx: log files are reopened (logrotate renamed them), the owner may
    // re-read its configuration, and the TLS certificates are re-read (by reconfigure(), or
    // here when on_reload did not call it).
    while ((sig = next_signal(stop_signals, notifier)) == SIGHUP || sig == SIGUSR2) {
        if (sig == SIGUSR2) {
            request_upgrade(options);
            continue;
        }
        notifier.reloading("reloading: logs, configuration, certificates");
        if (auto e = impl_->ops->reopen_logs(); !e.empty()) app::log_error("reopening logs: " + e);
        const uint64_t reloads = impl_->tls_reload_attempts;
        if (options.on_reload) options.on_reload();
        if (impl_->tls_context && impl_->tls_reload_attempts == reloads) {  // not reconfigured
            std::string e = impl_->reload_tls(impl_->options.tls);
            if (!e.empty())
                app::log_error("rivet: " + e);
            else
                impl_->server->reconfigure(impl_->live_config(impl_->options));
            impl_->ops->note_reload(e.empty() ? app::ReloadOutcome::Result::Applied
                                              : app::ReloadOutcome::Result::Refused);
        }
        const bool applied =
            impl_->ops->last_reload().result == app::ReloadOutcome::Result::Applied;
        notifier.ready(serving_status(*impl_->server) +
                       (applied ? "; reload applied"
                                : "; reload refused, the configuration in use stays (see the "
                                  "error log)"));
    }
    // No more pings: systemd stops watching at STOPPING=1, and a process that handed over is
    // not the service any more.
    notifier.unwatch();
    auto serving = Impl::Ending::Serving;
    impl_->ending.compare_exchange_strong(serving, Impl::Ending::Stopping);  // else handed over
    const bool handed_over = impl_->ending == Impl::Ending::HandedOver;
    if (!options.quiet) std::printf("rivet: signal %d, draining\n", sig);
    std::fflush(stdout);
    // Said only for a stop of the service: after a hand-over the service is the new process's,
    // and with NotifyAccess=all our STOPPING=1 would stop it.
    const uint64_t grace_ms = options.timeouts.drain_grace_ms;
    if (!handed_over)
        notifier.stopping(grace_ms > 0 ? "stopping: lame duck for " + std::to_string(grace_ms) +
                                             " ms (/readyz answers 503), then the drain"
                                       : "stopping: draining the requests in flight");
    if (grace_ms > 0) {
        const std::string grace = std::to_string(grace_ms) + " ms";
        if (handed_over) {
            app::log_info("handed over: open connections get " + grace +
                          " for their last answers (Connection: close)");
        } else {
            app::log_info("lame duck for " + grace +
                          ": /readyz and /healthz answer 503, every answer says Connection: close");
            begin_lame_duck();
        }
        wait_out_lame_duck(grace_ms, stop_signals, *impl_->ops);
        if (!handed_over) notifier.status("stopping: draining the requests in flight");
    }
    stop();
}

}  // namespace rivet
