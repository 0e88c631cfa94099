#include <rivet/app.hpp>

#include <pthread.h>
#include <signal.h>

#include <cstdio>
#include <stdexcept>
#include <vector>

#include "app/router.hpp"
#include "app/worker_pool.hpp"
#include "engine/exchange.hpp"
#include "engine/server.hpp"

namespace rivet {

namespace {

constexpr Method kAllMethods[] = {Method::Get,   Method::Head,   Method::Post,
                                  Method::Put,   Method::Delete, Method::Options,
                                  Method::Patch, Method::Trace,  Method::Connect};

std::string allow_list(app::MethodSet allowed) {
    allowed |= app::method_bit(Method::Options);  // OPTIONS is answered for every known path
    std::string out;
    for (Method m : kAllMethods) {
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
    };

    app::Router router;
    std::vector<RouteEntry> routes;
    // The routes without the static mounts: tells a file's 404 that the path is a route's.
    app::Router routes_only;
    std::vector<std::unique_ptr<StaticFiles>> mounts;
    bool adding_mount = false;
    RunOptions options;
    std::unique_ptr<app::WorkerPool> pool;
    std::unique_ptr<engine::Server> server;

    void serve(engine::Exchange& ex) override;
    void run_offloaded(const RouteEntry& route, engine::Exchange& ex, const app::RouteParams& p);
};

void App::Impl::serve(engine::Exchange& ex) {
    const auto& head = ex.head();
    if (head.method == Method::Options && head.path == "*") {
        Response res(200);
        res.header("Allow", allow_list(~app::MethodSet(0)));
        return ex.respond(res);
    }
    auto match = router.find(head.method, head.path);
    if (match.kind == app::Router::Match::NotFound) return ex.respond_simple(404, "Not Found\n");
    if (match.kind == app::Router::Match::MethodNotAllowed) {
        std::string allow = "Allow: " + allow_list(match.allowed) + "\r\n";
        if (head.method == Method::Options) return ex.respond_simple(204, {}, allow);
        return ex.respond_simple(405, "Method Not Allowed\n", allow);
    }
    const RouteEntry& route = routes[match.route];
    if (route.offload) return run_offloaded(route, ex, match.params);

    Request req(head, ex.body(), match.params, &ex);
    Response res;
    try {
        if (route.offload_when && route.offload_when(req))
            return run_offloaded(route, ex, match.params);
        route.handler(req, res);
    } catch (const std::exception& e) {
        std::fprintf(stderr, "rivet: handler for %.*s threw: %s\n", int(head.path.size()),
                     head.path.data(), e.what());
        return ex.respond_simple(500, "Internal Server Error\n");
    }
    if (route.files && res.status() == 404) {
        // No such file, but routes serve this path with other methods: 405 says more.
        auto other = routes_only.find(head.method, head.path);
        if (other.kind == app::Router::Match::MethodNotAllowed)
            return ex.respond_simple(405, "Method Not Allowed\n",
                                     "Allow: " + allow_list(other.allowed) + "\r\n");
    }
    ex.respond(res);
}

void App::Impl::run_offloaded(const RouteEntry& route, engine::Exchange& ex,
                              const app::RouteParams& params) {
    // The worker needs bytes of its own: the connection's buffer moves on without it.
    struct Job {
        Request request;
        engine::Deferred reply;
        const Handler* handler;
    };
    auto job = std::make_shared<Job>(
        Job{Request(ex.head(), ex.body(), params, &ex).detach(), ex.defer(), &route.handler});
    bool queued = pool->try_submit([job] {
        Response res;
        try {
            (*job->handler)(job->request, res);
        } catch (const std::exception& e) {
            std::fprintf(stderr, "rivet: offloaded handler threw: %s\n", e.what());
            res = Response(500);
            res.text("Internal Server Error\n");
        }
        job->reply.complete(std::move(res));
    });
    if (!queued) {
        Response busy(503);
        busy.text("Service Unavailable: the worker pool's queue is full\n");
        busy.header("Retry-After", std::to_string(options.retry_after_s));
        job->reply.complete(std::move(busy));
    }
}

App::Route& App::Route::offload(bool on) {
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
    impl_->router.add(method, pattern, id);
    if (!impl_->adding_mount) impl_->routes_only.add(method, pattern, id);
    impl_->routes.push_back({std::move(handler), false, nullptr});
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
    for (const auto& m : impl_->mounts) {
        StaticStats s = m->stats();
        sum.hits += s.hits;
        sum.misses += s.misses;
        sum.revalidated += s.revalidated;
        sum.changed += s.changed;
        sum.evictions += s.evictions;
        sum.entries += s.entries;
        sum.bytes += s.bytes;
    }
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
    engine::ServerConfig config = options.server;
    config.host = options.host;
    config.port = options.port;
    config.threads = options.threads;
    impl_->pool = std::make_unique<app::WorkerPool>(options.workers, options.queue);
    impl_->server = std::make_unique<engine::Server>(config, *impl_);
    for (auto& m : impl_->mounts) m->set_loops(impl_->server->threads());  // before they run
    impl_->server->start();
    if (!options.quiet) {
        bool v6 = options.host.find(':') != std::string::npos;  // a URL needs [::1]
        std::printf("rivet listening on http://%s%s%s:%u (%u threads, %u workers)\n",
                    v6 ? "[" : "", options.host.c_str(), v6 ? "]" : "",
                    unsigned(impl_->server->port()), impl_->server->threads(),
                    impl_->pool->workers());
    }
    std::fflush(stdout);
    return impl_->server->port();
}

void App::stop() {
    if (!impl_->server) return;
    impl_->server->drain();
    impl_->server->wait();
    impl_->pool->stop();
    impl_->server.reset();
    impl_->pool.reset();
}

void App::run(const RunOptions& options) {
    // Threads inherit the mask: only this one takes SIGINT/SIGTERM, through sigwait.
    sigset_t stop_signals;
    sigemptyset(&stop_signals);
    sigaddset(&stop_signals, SIGINT);
    sigaddset(&stop_signals, SIGTERM);
    pthread_sigmask(SIG_BLOCK, &stop_signals, nullptr);
    signal(SIGPIPE, SIG_IGN);
    start(options);
    int sig = 0;
    sigwait(&stop_signals, &sig);
    if (!options.quiet) std::printf("rivet: signal %d, draining\n", sig);
    std::fflush(stdout);
    stop();
}

}  // namespace rivet
