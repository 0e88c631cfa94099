#include <rivet/app.hpp>

#include <pthread.h>
#include <signal.h>

#include <cstdio>
#include <stdexcept>
#include <vector>

#include "app/async_answers.hpp"
#include "app/error_log.hpp"
#include "app/loop_services.hpp"
#include "app/method.hpp"
#include "app/operations.hpp"
#include "app/router.hpp"
#include "app/server_options.hpp"
#include "app/worker_pool.hpp"
#include "engine/exchange.hpp"
#include "engine/server.hpp"

namespace rivet {

namespace {

using HttpMethod = http::Method;  // the parser's; Method is the public one

constexpr HttpMethod kAllMethods[] = {HttpMethod::Get,   HttpMethod::Head,   HttpMethod::Post,
                                      HttpMethod::Put,   HttpMethod::Delete, HttpMethod::Options,
                                      HttpMethod::Patch, HttpMethod::Trace,  HttpMethod::Connect};

std::string allow_list(app::MethodSet allowed) {
    allowed |= app::method_bit(HttpMethod::Options);  // OPTIONS is answered for every known path
    std::string out;
    for (HttpMethod m : kAllMethods) {
        if (!(allowed & app::method_bit(m))) continue;
        if (!out.empty()) out += ", ";
        out += http::method_name(m);
    }
    return out;
}

}  // namespace

struct App::Impl final : engine::Application {
    struct RouteEntry {
        Handler handler;
        bool offload = false;
        std::function<bool(const Request&)> offload_when;
        StaticFiles* files = nullptr;  // a static mount's route
        CoroutineHandler coroutine;    // or a handler that waits (app/async_call.hpp)
        AsyncReplyHandler async_reply;
    };

    using Trace = app::Operations::Trace;

    app::Router router;
    std::vector<RouteEntry> routes;
    // The routes without the static mounts: tells a file's 404 that the path is a route's.
    app::Router routes_only;
    std::vector<std::unique_ptr<StaticFiles>> mounts;
    bool adding_mount = false;
    std::vector<app::RouteLabel> labels;  // by route id, for the metrics
    RunOptions options;
    std::unique_ptr<app::WorkerPool> pool;
    std::unique_ptr<engine::Server> server;
    std::unique_ptr<app::Operations> ops;          // logs, rate limits, metrics
    std::unique_ptr<engine::Server> admin_server;  // admin endpoints on a port of their own
    std::unique_ptr<app::EventLoops> loops;        // rivet::EventLoop of each I/O loop
    app::Operations* ops_ptr = nullptr;            // what async answers use (ops.get())
    app::OpsAnswers async_answers{ops_ptr};

    void serve(engine::Exchange& ex) override;
    void on_protocol_error(unsigned loop, const engine::PeerIp& peer, int status) override {
        ops->protocol_error(loop, peer, status);
    }
    void route_request(engine::Exchange& ex, Trace& trace);
    void run_offloaded(const RouteEntry& route, engine::Exchange& ex, const app::RouteParams& p,
                       Trace& trace);
};

void App::Impl::serve(engine::Exchange& ex) {
    Trace trace;
    trace.start_ns = app::Operations::now_ns();
    if (!ops->intercept(ex, trace)) route_request(ex, trace);
    if (ex.status() != 0) ops->finish(ex, trace);  // a deferred answer is logged by its job
}

void App::Impl::route_request(engine::Exchange& ex, Trace& trace) {
    const auto& head = ex.head();
    if (head.method == HttpMethod::Options && head.path == "*") {
        Response res(200);
        res.header("Allow", allow_list(~app::MethodSet(0)));
        return ex.respond(app::view_of(res));
    }
    auto match = router.find(head.method, head.path);
    if (match.kind == app::Router::Match::NotFound) return ex.respond_simple(404, "Not Found\n");
    if (match.kind == app::Router::Match::MethodNotAllowed) {
        std::string allow = "Allow: " + allow_list(match.allowed) + "\r\n";
        if (head.method == HttpMethod::Options) return ex.respond_simple(204, {}, allow);
        return ex.respond_simple(405, "Method Not Allowed\n", allow);
    }
    trace.route = match.route;
    const RouteEntry& route = routes[match.route];
    if (route.offload) return run_offloaded(route, ex, match.params, trace);
    if (route.coroutine)
        return app::run_coroutine(route.coroutine, ex, match.params, trace, async_answers);
    if (route.async_reply)
        return app::run_async_reply(route.async_reply, ex,
                                    Request(head, ex.body(), match.params, &ex), trace,
                                    async_answers, loops->at(ex.loop_index()));

    Request req(head, ex.body(), match.params, &ex);
    Response res;
    try {
        if (route.offload_when && route.offload_when(req))
            return run_offloaded(route, ex, match.params, trace);
        route.handler(req, res);
    } catch (const std::exception& e) {
        ops->handler_threw(ex.loop_index(), head.path, e.what());
        return ex.respond_simple(500, "Internal Server Error\n");
    } catch (...) {  // not a std::exception: still only this request fails
        ops->handler_threw(ex.loop_index(), head.path, nullptr);
        return ex.respond_simple(500, "Internal Server Error\n");
    }
    if (route.files && res.status() == 404) {
        // No such file, but routes serve this path with other methods: 405 says more.
        auto other = routes_only.find(head.method, head.path);
        if (other.kind == app::Router::Match::MethodNotAllowed)
            return ex.respond_simple(405, "Method Not Allowed\n",
                                     "Allow: " + allow_list(other.allowed) + "\r\n");
    }
    ex.respond(app::view_of(res));
}

void App::Impl::run_offloaded(const RouteEntry& route, engine::Exchange& ex,
                              const app::RouteParams& params, Trace& trace) {
    // The worker needs bytes of its own: the connection's buffer moves on without it.
    struct Job {
        Request request;
        engine::Deferred reply;
        const Handler* handler;
        Trace trace;
        app::Operations* ops;
    };
    ops->resolve_client(ex, trace);
    auto job = std::make_shared<Job>(Job{Request(ex.head(), ex.body(), params, &ex).detach(),
                                         ex.defer(), &route.handler, trace, ops.get()});
    bool queued = pool->try_submit([job] {
        Response res;
        try {
            (*job->handler)(job->request, res);
        } catch (const std::exception& e) {
            job->ops->handler_threw(Request::kNoLoop, job->request.path(), e.what());
            res = Response(500);
            res.text("Internal Server Error\n");
        } catch (...) {  // not a std::exception: still only this request fails
            job->ops->handler_threw(Request::kNoLoop, job->request.path(), nullptr);
            res = Response(500);
            res.text("Internal Server Error\n");
        }
        job->ops->finish_offloaded(job->request, job->trace, res);
        job->reply.complete(app::reply_of(std::move(res)));
    });
    if (!queued) {
        Response busy(503);
        busy.text("Service Unavailable: the worker pool's queue is full\n");
        busy.header("Retry-After", std::to_string(options.retry_after_s));
        ops->count_pool_rejected();
        ops->finish_offloaded(job->request, job->trace, busy);
        job->reply.complete(app::reply_of(std::move(busy)));
    }
}

App::Route App::add_coroutine(Method method, std::string_view pattern, CoroutineHandler handler) {
    Route r = route(method, pattern, Handler());
    impl_->routes[r.id_].coroutine = std::move(handler);
    return r;
}

App::Route App::add_async_reply(Method method, std::string_view pattern,
                                AsyncReplyHandler handler) {
    Route r = route(method, pattern, Handler());
    impl_->routes[r.id_].async_reply = std::move(handler);
    return r;
}

EventLoop& App::loop(unsigned i) {
    if (!impl_->loops) throw std::logic_error("the app is not running");
    return impl_->loops->at(i);
}

unsigned App::loops() const {
    return impl_->loops ? unsigned(impl_->loops->size()) : 0;
}

App::Route& App::Route::offload(bool on) {
    const auto& r = app_.impl_->routes[id_];
    if (on && (r.coroutine || r.async_reply))
        throw std::logic_error("a waiting handler runs on its loop; use rivet::on_workers");
    app_.impl_->routes[id_].offload = on;
    return *this;
}

App::Route& App::Route::offload_when(std::function<bool(const Request&)> heavy) {
    app_.impl_->routes[id_].offload_when = std::move(heavy);
    return *this;
}

App::App() : impl_(std::make_unique<Impl>()) {}

App::~App() {
    if (impl_->server) stop();
}

App::Route App::route(Method method, std::string_view pattern, Handler handler) {
    if (impl_->server) throw std::logic_error("routes must be added before the server starts");
    auto id = uint32_t(impl_->routes.size());
    impl_->router.add(app::protocol_method(method), pattern, id);
    if (!impl_->adding_mount) impl_->routes_only.add(app::protocol_method(method), pattern, id);
    impl_->routes.push_back({std::move(handler), false, nullptr});
    impl_->labels.push_back({std::string(method_name(method)), std::string(pattern)});
    return Route(*this, id);
}

StaticFiles& App::serve_static(std::string_view mount, std::string root, StaticOptions options) {
    if (impl_->server) throw std::logic_error("routes must be added before the server starts");
    std::string prefix(mount);
    while (prefix.size() > 1 && prefix.back() == '/') prefix.pop_back();
    if (prefix.empty() || prefix.front() != '/')
        throw std::invalid_argument("a static mount must start with '/'");
    // Kept even if a pattern below is refused: a route added before that points to it.
    impl_->mounts.push_back(
        std::make_unique<StaticFiles>(prefix, std::move(root), std::move(options)));
    StaticFiles* f = impl_->mounts.back().get();
    impl_->adding_mount = true;
    try {
        for (std::string pattern : {prefix == "/" ? "/*path" : prefix + "/*path", prefix}) {
            if (pattern == "/") continue;  // "/assets" itself is redirected to "/assets/"
            auto r = get(pattern, [f](Request& req, Response& res) { f->serve(req, res); });
            impl_->routes[r.id_].files = f;
        }
    } catch (...) {
        impl_->adding_mount = false;
        throw;
    }
    impl_->adding_mount = false;
    return *f;
}

StaticStats App::static_stats() const {
    StaticStats sum;
    for (const auto& m : impl_->mounts) sum += m->stats();
    return sum;
}

App::Route App::get(std::string_view p, Handler h) {
    return route(Method::Get, p, std::move(h));
}
App::Route App::post(std::string_view p, Handler h) {
    return route(Method::Post, p, std::move(h));
}
App::Route App::put(std::string_view p, Handler h) {
    return route(Method::Put, p, std::move(h));
}
App::Route App::patch(std::string_view p, Handler h) {
    return route(Method::Patch, p, std::move(h));
}
App::Route App::del(std::string_view p, Handler h) {
    return route(Method::Delete, p, std::move(h));
}

uint16_t App::start(const RunOptions& options) {
    if (impl_->server) throw std::logic_error("the app is already running");
    impl_->options = options;
    impl_->pool = std::make_unique<app::WorkerPool>(options.workers, options.queue);
    impl_->server = std::make_unique<engine::Server>(app::server_config(options), *impl_);
    for (auto& m : impl_->mounts) m->set_loops(impl_->server->threads());  // before they run
    std::vector<net::Loop*> loops;
    for (unsigned i = 0; i < impl_->server->threads(); ++i)
        loops.push_back(&impl_->server->loop(i));
    impl_->loops = std::make_unique<app::EventLoops>(std::move(loops), impl_->pool.get(),
                                                     options.retry_after_s);
    try {
        start_operations(options);
    } catch (...) {
        impl_->admin_server.reset();
        impl_->loops.reset();
        impl_->server.reset();
        impl_->ops.reset();
        impl_->pool.reset();
        throw;
    }
    impl_->server->start();
    if (!options.quiet) {
        bool v6 = options.host.find(':') != std::string::npos;  // a URL needs [::1]
        std::printf("rivet listening on http://%s%s%s:%u (%u threads, %u workers)\n", v6 ? "[" : "",
                    options.host.c_str(), v6 ? "]" : "", unsigned(impl_->server->port()),
                    impl_->server->threads(), impl_->pool->workers());
        if (impl_->admin_server)
            std::printf("rivet admin endpoints on http://%s:%u\n",
                        options.ops.admin.admin_host.c_str(),
                        unsigned(impl_->admin_server->port()));
    }
    std::fflush(stdout);
    return impl_->server->port();
}

// The access log, rate limiter and metrics, and the admin listener if it has its own port.
void App::start_operations(const RunOptions& options) {
    Impl* impl = impl_.get();
    impl_->ops = std::make_unique<app::Operations>(
        options.ops, impl_->server->threads(), impl_->labels, [this, impl] {
            app::ServingStats s;
            s.traffic = impl->server->stats();
            s.queue_depth = impl->pool->queued();
            s.workers = impl->pool->workers();
            if (!impl->mounts.empty()) {  // the static file caches' lookups
                StaticStats files = static_stats();
                s.has_cache = true;
                s.cache_hits = files.hits;
                s.cache_misses = files.misses;
            }
            return s;
        });
    impl_->ops_ptr = impl_->ops.get();
    if (options.ops.admin.admin_port != 0) {
        engine::ServerConfig admin;
        admin.host = options.ops.admin.admin_host;
        admin.port = options.ops.admin.admin_port;
        admin.threads = 1;
        admin.limits.max_connections = 64;
        impl_->admin_server =
            std::make_unique<engine::Server>(admin, impl_->ops->admin_application());
        impl_->admin_server->start();
    }
}

void App::stop() {
    if (!impl_->server) return;
    if (impl_->admin_server) impl_->admin_server->drain();
    impl_->server->drain();
    impl_->server->wait();
    impl_->pool->stop();
    impl_->admin_server.reset();
    impl_->ops->stop();  // every answered request is in the access log file now
    impl_->loops.reset();
    impl_->server.reset();
    impl_->pool.reset();
    impl_->ops.reset();
}

std::string App::reconfigure(const RunOptions& options) {
    if (!impl_->server) throw std::logic_error("the app is not running");
    OperationsOptions ops = options.ops;
    ops.admin.admin_port = impl_->options.ops.admin.admin_port;  // the listener stays put
    ops.admin.admin_host = impl_->options.ops.admin.admin_host;
    std::string problems = impl_->ops->reconfigure(ops);
    impl_->server->reconfigure(app::server_config(options));  // host, port and threads stay
    impl_->options.limits = options.limits;
    impl_->options.timeouts = options.timeouts;
    impl_->options.ops = ops;
    return problems;
}

void App::run(const RunOptions& options) {
    // Threads inherit the mask: only this one takes SIGINT/SIGTERM, through sigwait.
    sigset_t stop_signals;
    sigemptyset(&stop_signals);
    sigaddset(&stop_signals, SIGINT);
    sigaddset(&stop_signals, SIGTERM);
    sigaddset(&stop_signals, SIGHUP);
    pthread_sigmask(SIG_BLOCK, &stop_signals, nullptr);
    signal(SIGPIPE, SIG_IGN);
    start(options);
    int sig = 0;
    // SIGHUP, as for nginx: log files are reopened (logrotate renamed them) and the owner
    // may re-read its configuration.
    while (sigwait(&stop_signals, &sig) == 0 && sig == SIGHUP) {
        if (auto e = impl_->ops->reopen_logs(); !e.empty()) app::log_error("reopening logs: " + e);
        if (options.on_reload) options.on_reload();
    }
    if (!options.quiet) std::printf("rivet: signal %d, draining\n", sig);
    std::fflush(stdout);
    stop();
}

}  // namespace rivet
