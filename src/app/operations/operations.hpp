// Operations: what App does around each request for the operator: the access log, the rate
// limiter, the metrics, and the admin endpoints (/metrics, /status, /status.json, /healthz,
// /livez, /readyz).
//
// Its settings can be replaced while requests run (reconfigure, on SIGHUP): a settings object
// is never changed once published; loops read the current one with one atomic load, and old
// ones are kept until the Operations ends (a reload is rare, and they are small).
#pragma once

#include <atomic>
#include <chrono>
#include <functional>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <vector>

#include <rivet/operations.hpp>
#include <rivet/request.hpp>
#include <rivet/response.hpp>

#include "app/operations/access_log.hpp"
#include "app/operations/access_log_format.hpp"
#include "app/operations/ip_address.hpp"
#include "app/operations/metrics.hpp"
#include "app/operations/metrics_export.hpp"
#include "app/operations/rate_limiter.hpp"
#include "app/operations/shared_rate_limit.hpp"
#include "core/clock.hpp"
#include "engine/exchange.hpp"

namespace rivet::app {

class Operations {
public:
    // `routes`: the App's routes, by id; pseudo-routes are added after them.
    Operations(const OperationsOptions& options, unsigned loops, std::vector<RouteLabel> routes,
               std::function<ServingStats()> serving);
    ~Operations();

    // Applies new settings (the admin listener's address excepted). Returns an error text
    // (e.g. a log file that cannot be opened); what could be applied is applied regardless.
    std::string reconfigure(const OperationsOptions& options);
    std::string reopen_logs();  // logrotate: files renamed away are replaced by new ones
    void stop();                // flushes the access log; no more lines after it
    // What /readyz and /healthz answer (/livez answers 200 in every state): Ready, or 503 when
    // the application said it cannot serve (App::set_ready(false): a lost database) or in the
    // lame duck before a drain, which no set_ready(true) undoes.
    enum class Readiness : uint8_t { Ready, Unready, Draining };
    Readiness readiness() const {
        if (lame_duck_.load(std::memory_order_relaxed)) return Readiness::Draining;
        return app_ready_->load(std::memory_order_relaxed) ? Readiness::Ready : Readiness::Unready;
    }
    // The application's flag (App::set_ready), read on every health check. It is the App's, so
    // setting it never touches an Operations that a stop may be destroying.
    void follow_readiness(const std::atomic<bool>* app_ready) { app_ready_ = app_ready; }
    // The lame-duck period before a drain (App::run), or the drain itself (App::stop): readiness
    // fails from now on, so health checks take the instance out of rotation while it still
    // serves, and rivet_draining says 1.
    void begin_lame_duck() { lame_duck_.store(true, std::memory_order_relaxed); }

    // What the metrics show of the instance (any thread; rare): the last reload's outcome, now,
    // and the certificates the TLS listener serves (at the start and after each reload).
    void note_reload(ReloadOutcome::Result result);
    ReloadOutcome last_reload();
    void set_certificates(std::vector<CertificateExpiry> certificates);

    // One request's bookkeeping, from its start to its answer.
    struct Trace {
        uint64_t start_ns = 0;
        uint32_t route = 0;
        bool have_client = false;
        IpAddress client;
    };
    static uint64_t now_ns() { return core::monotonic_ns(); }
    // A request's start and end (now_ns's clock). On a loop the start is the loop's last
    // reading: its turn's start, or the end of the request before it, so that a pipelined batch
    // reads the clock once per request rather than twice. Off a loop (a unit test's serve), a
    // reading of its own.
    static uint64_t start_ns();
    static uint64_t end_ns();  // a reading; on a loop, kept as the next request's start

    // On the loop, before routing: the admin endpoints (when served on the main port, answered
    // here) and the rate limit (a refused request is answered by the caller, 429 with
    // Retry-After: `retry_after_s`, so that its middleware sees it). AskShared: the limit is in
    // Redis; the caller holds the request and asks decide_shared. LimitUnavailable: the shared
    // limit's Redis cannot answer and the fallback is Closed (503 with Retry-After).
    enum class Verdict : uint8_t { Pass, Answered, RateLimited, AskShared, LimitUnavailable };
    Verdict intercept(engine::Exchange& ex, Trace& trace, unsigned& retry_after_s);
    // After AskShared, on the request's loop: `done(verdict, retry_after_s)` later, on it, with
    // Pass, RateLimited or LimitUnavailable (the fallback applied when Redis cannot answer).
    using SharedVerdict = std::function<void(Verdict, unsigned retry_after_s)>;
    void decide_shared(unsigned loop, const Trace& trace, SharedVerdict done);
    // On the loop, after an answer given there (ex.status() != 0).
    void finish(engine::Exchange& ex, const Trace& trace);
    // From any thread, for an offloaded request, once its response exists.
    void finish_offloaded(const Request& req, const Trace& trace, const Response& res);
    void protocol_error(unsigned loop, const engine::PeerIp& peer, int status);
    // Fills trace.client (the peer, or whom trusted proxies name) if intercept() did not.
    void resolve_client(engine::Exchange& ex, Trace& trace) {
        if (trace.have_client) return;
        trace.client = client_of(ex, settings());
        trace.have_client = true;
    }
    void count_pool_rejected() { metrics_.count_pool_rejected(); }
    // A handler threw: logged here with what it threw (`what`, or null when it was not a
    // std::exception), counted, and answered 500 by the caller.
    void handler_threw(unsigned loop, std::string_view path, const char* what);
    void count_handler_cancelled(unsigned loop) { metrics_.count_handler_cancelled(loop); }
    // A WebSocket session ended (on its loop): its access-log line.
    void websocket_closed(unsigned loop, const IpAddress& client, std::string_view path,
                          uint64_t micros, const WebSocketSummary& summary);
    Metrics& metrics() { return metrics_; }

    uint32_t unrouted() const { return first_pseudo_; }  // 404/405/429 and OPTIONS *

    // For the admin listener (AdminOptions::admin_port): only the admin endpoints.
    engine::Application& admin_application();

    Snapshot snapshot();
    const LogOptions& log_options() const { return settings().options.log; }

private:
    struct Settings {
        OperationsOptions options;
        NetworkList allow;
        NetworkList trusted;
        std::optional<redis::Endpoint> shared;  // rate_limit.redis, parsed
    };
    const Settings& settings() const { return *settings_.load(std::memory_order_acquire); }
    IpAddress client_of(engine::Exchange& ex, const Settings& s);
    // Answers an admin path if it is one that is on; returns whether it did.
    bool serve_admin(engine::Exchange& ex, Trace& trace);
    void finish_on(unsigned shard, engine::Exchange& ex, const Trace& trace);

    std::atomic<const Settings*> settings_{nullptr};
    std::vector<std::unique_ptr<Settings>> history_;  // every published settings object
    std::mutex reconfigure_mutex_;

    unsigned loops_;
    uint32_t first_pseudo_;
    Metrics metrics_;
    AccessLog access_log_;
    RateLimiter limiter_;
    SharedRateLimit shared_limit_;
    std::function<ServingStats()> serving_;
    std::chrono::system_clock::time_point started_ = std::chrono::system_clock::now();
    uint64_t started_ns_ = now_ns();
    std::atomic<bool> lame_duck_{false};
    std::mutex instance_mutex_;  // guards the two below
    ReloadOutcome last_reload_;
    std::vector<CertificateExpiry> certificates_;
    const std::atomic<bool> always_ready_{true};
    const std::atomic<bool>* app_ready_ = &always_ready_;

    struct AdminApplication;
    std::unique_ptr<AdminApplication> admin_app_;
};

}  // namespace rivet::app
