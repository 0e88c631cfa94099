#include "app/operations/operations.hpp"

#include <netinet/in.h>

#include <cstdio>
#include <cstring>
#include <ctime>
#include <stdexcept>

#include "app/operations/error_log.hpp"
#include "app/operations/status_page.hpp"
#include "app/request/method.hpp"
#include "app/request/request_access.hpp"
#include "app/server_options.hpp"
#include "core/bounded_text.hpp"
#include "net/loop.hpp"

namespace rivet::app {

namespace {

// How much of a request's path and of an exception's message one error-log line quotes: both
// may be the client's text (an exception can quote a token from the body), which must not
// cost the log what the client sent.
constexpr size_t kMaxLoggedPath = 1024;
constexpr size_t kMaxLoggedWhat = 1024;

// A request that started on a loop (its fine clock) and ends on a worker (clock_gettime) may
// read an end a hair before its start: the two clocks can differ by the loop clock's rate error.
uint64_t micros_between(uint64_t start_ns, uint64_t end_ns) {
    return end_ns > start_ns ? (end_ns - start_ns) / 1000 : 0;
}

// Pseudo-routes, after the App's own: offsets from first_pseudo_.
enum Pseudo : uint32_t {
    kUnrouted,
    kProtocol,
    kMetrics,
    kStatus,
    kStatusJson,
    kHealth,
    kLive,
    kReady,
    kCount
};

IpAddress from_peer(const engine::PeerIp& p) {
    return p.family == AF_INET6 ? IpAddress::v6(p.bytes) : IpAddress::v4(p.bytes);
}

void set_tls(AccessRecord& r, const engine::TlsFacts& tls) {
    if (!tls.secure) return;
    r.secure = true;
    r.tls_resumed = tls.resumed;
    r.tls_version = tls.version;
    r.tls_cipher = tls.cipher;
    r.tls_server_name = tls.server_name;
}

double unix_time(std::chrono::system_clock::time_point t) {
    return double(std::chrono::duration_cast<std::chrono::milliseconds>(t.time_since_epoch())
                      .count()) /
           1000.0;
}

}  // namespace

struct Operations::AdminApplication final : engine::Application {
    explicit AdminApplication(Operations& ops) : ops(ops) {}
    void serve(engine::Exchange& ex) override {
        Trace trace;
        trace.start_ns = start_ns();
        trace.route = ops.first_pseudo_ + kUnrouted;
        if (!ops.serve_admin(ex, trace)) ex.respond_simple(404, "Not Found\n");
        // Not a main loop: its counters and log lines go where the workers' go.
        ops.finish_on(ops.loops_, ex, trace);
    }
    Operations& ops;
};

Operations::Operations(const OperationsOptions& options, unsigned loops,
                       std::vector<RouteLabel> routes, std::function<ServingStats()> serving)
    : loops_(loops),
      first_pseudo_(uint32_t(routes.size())),
      metrics_(loops,
               [&] {
                   routes.push_back({"", "(none)"});
                   routes.push_back({"", "(protocol)"});
                   routes.push_back({"GET", "/metrics"});
                   routes.push_back({"GET", "/status"});
                   routes.push_back({"GET", "/status.json"});
                   routes.push_back({"GET", "/healthz"});
                   routes.push_back({"GET", "/livez"});
                   routes.push_back({"GET", "/readyz"});
                   return std::move(routes);
               }()),
      access_log_(loops + 1),
      limiter_(options.rate_limit.max_clients),
      serving_(std::move(serving)),
      admin_app_(std::make_unique<AdminApplication>(*this)) {
    last_reload_.time_s = unix_time(started_);  // the start's configuration: applied
    if (auto e = reconfigure(options); !e.empty()) throw std::runtime_error(e);
}

engine::Application& Operations::admin_application() {
    return *admin_app_;
}

Operations::~Operations() {
    stop();
}

std::string Operations::reconfigure(const OperationsOptions& options) {
    std::lock_guard lock(reconfigure_mutex_);
    auto next = std::make_unique<Settings>();
    next->options = options;
    std::string problems;
    auto note = [&](const std::string& e) {
        if (!e.empty()) problems += (problems.empty() ? "" : "; ") + e;
    };
    // The lists were validated with the configuration; a library user may still pass junk.
    if (auto bad = next->allow.assign(options.rate_limit.allow); !bad.empty())
        note("rate limit allow list: not an address or network: " + bad);
    if (auto bad = next->trusted.assign(options.rate_limit.trusted_proxies); !bad.empty())
        note("trusted proxies: not an address or network: " + bad);
    if (!options.rate_limit.redis.empty()) {
        next->shared = SharedRateLimit::endpoint_of(options.rate_limit);
        if (!next->shared)
            note("rate limit Redis: not HOST:PORT with an IP address: " + options.rate_limit.redis);
    }
    if (history_.empty() ||
        history_.back()->options.rate_limit.max_clients != options.rate_limit.max_clients) {
        if (!history_.empty()) limiter_.resize(options.rate_limit.max_clients);
    }
    auto& errors = ErrorLog::instance();
    errors.set_level(options.log.level);
    if (history_.empty() || history_.back()->options.log.error_log != options.log.error_log)
        note(errors.open(options.log.error_log));
    note(access_log_.configure(options.log));
    settings_.store(next.get(), std::memory_order_release);
    history_.push_back(std::move(next));
    return problems;
}

std::string Operations::reopen_logs() {
    std::string problems = ErrorLog::instance().reopen();
    access_log_.flush();  // lines for the old file go to the old file
    if (auto e = access_log_.reopen(); !e.empty()) problems += (problems.empty() ? "" : "; ") + e;
    return problems;
}

void Operations::stop() {
    access_log_.stop();
}

IpAddress Operations::client_of(engine::Exchange& ex, const Settings& s) {
    IpAddress peer = from_peer(ex.peer_ip());
    if (s.trusted.empty()) return peer;
    return forwarded_client(peer, ex.head().headers, s.trusted);
}

bool Operations::serve_admin(engine::Exchange& ex, Trace& trace) {
    const auto& admin = settings().options.admin;
    std::string_view path = ex.head().path;
    auto method = ex.head().method;
    if (method != http::Method::Get && method != http::Method::Head) return false;
    if (admin.metrics && path == "/metrics") {
        trace.route = first_pseudo_ + kMetrics;
        Response res;
        res.body(prometheus_text(snapshot()), "text/plain; version=0.0.4; charset=utf-8");
        ex.respond(view_of(res));
        return true;
    }
    if (admin.status_page && path == "/status") {
        trace.route = first_pseudo_ + kStatus;
        Response res;
        res.html(status_page_html());
        res.header("Cache-Control", "no-store");
        ex.respond(view_of(res));
        return true;
    }
    if (admin.status_page && path == "/status.json") {
        trace.route = first_pseudo_ + kStatusJson;
        Response res;
        res.body(status_json(snapshot()), "application/json");
        res.header("Cache-Control", "no-store");
        ex.respond(view_of(res));
        return true;
    }
    if (admin.health) {
        // One state, three questions (Kubernetes' conventions): /livez asks whether the process
        // works (yes, until it exits: restarting it cures nothing a drain or a lost database
        // causes); /readyz whether it should get traffic; /healthz, the one balancers were
        // told to probe before the other two existed, asks the same as /readyz.
        bool live = path == "/livez";
        if (!live && path != "/readyz" && path != "/healthz") return false;
        trace.route = first_pseudo_ + (live ? kLive : path == "/readyz" ? kReady : kHealth);
        Readiness state = readiness();
        Response res;
        if (live || state == Readiness::Ready)
            res.text("ok");
        else
            res.status(503).text(state == Readiness::Draining ? "draining" : "unready");
        // "Connection: close" here, not only from the loop's own lame-duck flag: that one is
        // set by a task posted to each loop, which a request on it may come before.
        if (state == Readiness::Draining) res.close_connection(true);
        ex.respond(view_of(res));
        return true;
    }
    return false;
}

Operations::Verdict Operations::intercept(engine::Exchange& ex, Trace& trace,
                                          unsigned& retry_after_s) {
    const Settings& s = settings();
    trace.route = first_pseudo_ + kUnrouted;
    // The admin endpoints, unless they have a listener of their own. A cheap first look: all of
    // them start with "/m", "/s", "/h", "/l" or "/r" and end with 's', 'n' or 'z' (/hello, the
    // commonest path of all in benchmarks, fails it).
    std::string_view path = ex.head().path;
    if (s.options.admin.admin_port == 0 && path.size() >= 6 &&
        (path[1] == 'm' || path[1] == 's' || path[1] == 'h' || path[1] == 'l' || path[1] == 'r') &&
        (path.back() == 's' || path.back() == 'n' || path.back() == 'z') && serve_admin(ex, trace))
        return Verdict::Answered;
    const auto& rl = s.options.rate_limit;
    if (!rl.enabled) return Verdict::Pass;
    trace.client = client_of(ex, s);
    trace.have_client = true;
    if (s.allow.contains(trace.client)) return Verdict::Pass;
    // A streamed body cannot wait for Redis before its handler (its bytes are the handler's to
    // pull): such requests are limited here, by this instance's buckets.
    // An upgrade (WebSocket) hands its connection over from the answer: served at once too.
    if (s.shared && !ex.streamed() && http::find_header(ex.head().headers, "upgrade").empty())
        return Verdict::AskShared;
    auto verdict = limiter_.check(trace.client, trace.start_ns, rl.requests_per_second, rl.burst);
    if (verdict.allowed) return Verdict::Pass;
    metrics_.count_rate_limited(ex.loop_index());
    retry_after_s = verdict.retry_after_s;
    return Verdict::RateLimited;
}

void Operations::decide_shared(unsigned loop, const Trace& trace, SharedVerdict done) {
    const Settings& s = settings();
    const auto& rl = s.options.rate_limit;
    net::Loop* net_loop = net::Loop::current();
    if (!s.shared || !net_loop) return done(Verdict::Pass, 0);  // reconfigured meanwhile
    auto decided = [this, loop, client = trace.client, start_ns = trace.start_ns,
                    rate = rl.requests_per_second, burst = rl.burst, fallback = rl.redis_fallback,
                    done = std::move(done)](SharedRateLimit::Outcome o) {
        using Kind = SharedRateLimit::Outcome::Kind;
        if (o.kind == Kind::Allowed) return done(Verdict::Pass, 0);
        if (o.kind == Kind::Unavailable) {
            metrics_.count_rate_limit_fallback(loop);
            switch (fallback) {
                case RateLimitFallback::Open:
                    return done(Verdict::Pass, 0);
                case RateLimitFallback::Closed:
                    return done(Verdict::LimitUnavailable, 1);
                case RateLimitFallback::Local: {
                    auto local = limiter_.check(client, start_ns, rate, burst);
                    if (local.allowed) return done(Verdict::Pass, 0);
                    o.retry_after_s = local.retry_after_s;
                    break;
                }
            }
        }
        metrics_.count_rate_limited(loop);
        done(Verdict::RateLimited, o.retry_after_s);
    };
    shared_limit_.check(*net_loop, *s.shared, trace.client, rl.requests_per_second, rl.burst,
                        std::move(decided));
}

void Operations::finish(engine::Exchange& ex, const Trace& trace) {
    finish_on(ex.loop_index(), ex, trace);
}

uint64_t Operations::start_ns() {
    const net::Loop* loop = net::Loop::current();
    return loop ? loop->fine_ns() : now_ns();
}

uint64_t Operations::end_ns() {
    net::Loop* loop = net::Loop::current();
    return loop ? loop->read_fine_ns() : now_ns();
}

void Operations::finish_on(unsigned loop, engine::Exchange& ex, const Trace& trace) {
    const uint64_t micros = micros_between(trace.start_ns, end_ns());
    const auto& head = ex.head();
    metrics_.record(loop, trace.route, Metrics::protocol_of(head.version_major, head.version_minor),
                    public_method(head.method), ex.status(), micros);
    if (!access_log_.enabled()) return;
    AccessRecord r;
    r.method = head.method_name;
    r.target = head.target;
    r.version_major = head.version_major;
    r.version_minor = head.version_minor;
    for (const auto& h : head.headers) {  // one pass for both
        if (h.name.size() == 7 && http::iequals(h.name, "Referer"))
            r.referer = h.value;
        else if (h.name.size() == 10 && http::iequals(h.name, "User-Agent"))
            r.user_agent = h.value;
    }
    r.status = ex.status();
    r.body_bytes = head.method == http::Method::Head ? 0 : ex.body_bytes();
    r.micros = micros;
    set_tls(r, ex.tls());
    access_log_.write(loop, r, trace.have_client ? trace.client : client_of(ex, settings()));
}

void Operations::websocket_closed(unsigned loop, const IpAddress& client, std::string_view path,
                                  uint64_t micros, const WebSocketSummary& summary) {
    if (!access_log_.enabled()) return;
    AccessRecord r;
    r.method = "GET";
    r.target = path;
    r.status = 101;
    r.body_bytes = summary.bytes_out;
    r.micros = micros;
    r.websocket = &summary;
    access_log_.write(loop, r, client);
}

void Operations::finish_offloaded(const Request& req, const Trace& trace, const Response& res) {
    const uint64_t micros = micros_between(trace.start_ns, now_ns());
    metrics_.record_shared(trace.route,
                           Metrics::protocol_of(req.version_major(), req.version_minor()),
                           req.method(), res.status(), micros);
    if (!access_log_.enabled()) return;
    AccessRecord r;
    r.method = req.method_name();
    r.target = req.target();
    r.version_major = req.version_major();
    r.version_minor = req.version_minor();
    r.referer = req.header("Referer");
    r.user_agent = req.header("User-Agent");
    r.status = res.status();
    const FileRange* file = res.file_range();
    r.body_bytes = req.method() == Method::Head ? 0 : file ? file->length : res.body().size();
    r.micros = micros;
    set_tls(r, RequestAccess::tls(req));
    access_log_.write(loops_, r, trace.client);
}

void Operations::protocol_error(unsigned loop, const engine::PeerIp& peer, int status) {
    // The parser refused the request: its method, if any, is not to be trusted.
    metrics_.record(loop, first_pseudo_ + kProtocol, Metrics::Http11, Method::Other, status, 0);
    if (!access_log_.enabled()) return;
    AccessRecord r;
    r.status = status;
    access_log_.write(loop, r, from_peer(peer));
}

void Operations::handler_threw(unsigned loop, std::string_view path, const char* what) {
    metrics_.count_handler_exception(loop);
    std::string where = loop == Request::kNoLoop ? "offloaded handler for " : "handler for ";
    where.append(core::bounded_text(path, kMaxLoggedPath));
    log_error(what ? where + " threw: " + core::bounded_text(what, kMaxLoggedWhat)
                   : where + " threw a non-standard exception");
}

void Operations::note_reload(ReloadOutcome::Result result) {
    std::lock_guard lock(instance_mutex_);
    last_reload_ = {result, unix_time(std::chrono::system_clock::now())};
}

ReloadOutcome Operations::last_reload() {
    std::lock_guard lock(instance_mutex_);
    return last_reload_;
}

void Operations::set_certificates(std::vector<CertificateExpiry> certificates) {
    std::lock_guard lock(instance_mutex_);
    certificates_ = std::move(certificates);
}

Snapshot Operations::snapshot() {
    Snapshot s;
    s.totals = metrics_.totals();
    s.routes = metrics_.routes();
    if (serving_) s.serving = serving_();
    s.serving.loops = loops_;
    const auto& rl = settings().options.rate_limit;
    s.rate_limiting = rl.enabled;
    s.rate_limit_clients = limiter_.tracked();
    s.rate_limit_capacity = limiter_.capacity();
    s.access_log_dropped = access_log_.dropped();
    s.start_time_s = unix_time(started_);
    s.lifecycle =
        lame_duck_.load(std::memory_order_relaxed) ? Lifecycle::Leaving : Lifecycle::Serving;
    {
        std::lock_guard lock(instance_mutex_);
        s.last_reload = last_reload_;
        s.certificates = certificates_;
    }
    s.uptime_s = double(now_ns() - started_ns_) / 1e9;
    read_process_stats(s);
    return s;
}

}  // namespace rivet::app
