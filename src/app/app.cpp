#include <rivet/app.hpp>

#include <cstdio>
#include <optional>
#include <stdexcept>
#include <string>
#include <vector>

#include "app/app_impl.hpp"
#include "app/async/loop_services.hpp"
#include "app/operations/error_log.hpp"
#include "app/operations/shared_rate_limit.hpp"
#include "app/request/method.hpp"
#include "app/server_options.hpp"
#include "app/tls_options.hpp"

namespace rivet {

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

App::Route& App::Route::priority(Priority level) {
    app_.impl_->routes[id_].priority = level;
    return *this;
}

App::Route& App::Route::max_body(uint64_t bytes) {
    if (bytes == 0) throw std::invalid_argument("a route's body limit must be at least 1 byte");
    app_.impl_->routes[id_].max_body = bytes;
    app_.impl_->routes_plan_bodies = true;
    return *this;
}

App::Route& App::Route::stream_body() {
    auto& route = app_.impl_->routes[id_];
    if (!route.coroutine)
        throw std::logic_error("stream_body() needs a coroutine handler (returning rivet::Task<>)");
    route.streamed = true;
    app_.impl_->routes_plan_bodies = true;
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

std::vector<int> App::listening_fds() const {
    return impl_->server ? impl_->server->listening_fds() : std::vector<int>{};
}

std::vector<int> App::admin_listening_fds() const {
    return impl_->admin_server ? impl_->admin_server->listening_fds() : std::vector<int>{};
}

App& App::use(std::shared_ptr<Middleware> middleware) {
    return use("", std::move(middleware));
}

App& App::use(std::string_view prefix, std::shared_ptr<Middleware> middleware) {
    if (impl_->server) throw std::logic_error("middleware must be added before the server starts");
    impl_->middleware.add(prefix, std::move(middleware));
    return *this;
}

App& App::on_error(ErrorHandler handler) {
    if (impl_->server)
        throw std::logic_error("the error handler must be set before the server starts");
    impl_->error_handler = std::move(handler);
    return *this;
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
    if (!options.admin_listen_fds.empty() && options.ops.admin.admin_port == 0)
        throw std::invalid_argument("admin_listen_fds needs ops.admin.admin_port set");
    std::optional<redis::Endpoint> pubsub_redis;
    if (options.pubsub == PubSub::Redis) {
        pubsub_redis = app::SharedRateLimit::endpoint_of(options.ops.rate_limit);
        if (!pubsub_redis)
            throw std::invalid_argument(
                "pubsub Redis needs ops.rate_limit.redis: HOST:PORT with an IP address");
    }
    impl_->options = options;
    engine::ServerConfig config = app::server_config(options);
    impl_->start_tls(options, config);  // before any thread starts: a bad certificate stops here
    impl_->pool = std::make_unique<app::WorkerPool>(options.workers, options.queue);
    impl_->server = std::make_unique<engine::Server>(std::move(config), *impl_);
    for (auto& m : impl_->mounts) m->set_loops(impl_->server->threads());  // before they run
    std::vector<net::Loop*> loops;  // rivet::EventLoop::current() finds them from now on
    for (unsigned i = 0; i < impl_->server->threads(); ++i)
        loops.push_back(&impl_->server->loop(i));
    impl_->loops = std::make_unique<app::EventLoops>(std::move(loops), impl_->pool.get(),
                                                     options.retry_after_s);
    // Nothing is served yet: a failure here closes what was bound and opened.
    auto discard = [this] {
        impl_->admin_server.reset();
        impl_->loops.reset();
        impl_->server.reset();
        impl_->ops.reset();
        impl_->pool.reset();
    };
    try {
        start_operations(options);
        impl_->publish_certificates();
        // Bound and opened, not yet accepting: as nginx's workers, serve only once dropped.
        if (options.on_bound) options.on_bound();
    } catch (...) {
        discard();
        throw;
    }
    // Pub/sub: each loop delivers to its own subscribers (app/websocket/topics.hpp).
    Impl* impl = impl_.get();
    app::TopicInterest::Report report;
    if (pubsub_redis) {  // before the loops run: the relay's connection joins loop 0
        std::vector<net::Loop*> relay_loops;
        for (unsigned i = 0; i < impl_->server->threads(); ++i)
            relay_loops.push_back(&impl_->server->loop(i));
        impl_->relay = std::make_unique<app::TopicRelay>(
            std::move(relay_loops), *pubsub_redis, impl_->ops->metrics(),
            [impl](std::string_view topic, std::string_view message, MessageKind kind) {
                impl->deliver_locally(topic, message, kind);
            });
        // The holders' first and last subscribers make the relay's subscriptions. The relay
        // goes before the WebSockets that stop() closes, whose reports then go nowhere.
        report = [impl](std::string_view topic, app::TopicInterest::Change change) {
            if (impl->relay) impl->relay->interest(topic, change);
        };
        impl_->stream_topics.report_to(report);
    }
    impl_->topics = std::make_unique<app::Topics>(
        impl_->server->threads(),
        [impl](unsigned i, std::function<void()> task) {
            impl->server->loop(i).post(std::move(task));
        },
        std::move(report));
    for (auto& route : impl_->websocket_routes) {
        route->topics = impl_->topics.get();
        route->ops = impl_->ops.get();
    }
    if (impl_->relay) impl_->relay->start();
    impl_->loops->set_metrics(&impl_->ops->metrics());
    if (impl_->admin_server) impl_->admin_server->start();
    impl_->server->start();
    if (!options.quiet) {
        // The host of an inherited socket is its own; a URL needs [::1].
        std::printf("rivet listening on http://%s:%u (%u threads, %u workers)\n",
                    app::url_host(impl_->server->host()).c_str(), unsigned(impl_->server->port()),
                    impl_->server->threads(), impl_->pool->workers());
        impl_->print_tls_listening();
        if (impl_->admin_server)
            std::printf("rivet admin endpoints on http://%s:%u\n",
                        impl_->admin_server->host().c_str(), unsigned(impl_->admin_server->port()));
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
    impl_->ops->follow_readiness(&impl_->ready);
    if (options.ops.admin.admin_port != 0) {
        engine::ServerConfig admin;
        admin.host = options.ops.admin.admin_host;
        admin.port = options.ops.admin.admin_port;
        admin.threads = 1;
        admin.listen_fds = options.admin_listen_fds;
        admin.limits.max_connections = 64;
        impl_->admin_server =  // bound here, started by start() with the main listener
            std::make_unique<engine::Server>(admin, impl_->ops->admin_application());
    }
}

void App::stop() {
    if (!impl_->server) return;
    impl_->shutdown.trigger();  // before the drain: long-lived answers can end first
    impl_->loops->cancel_spawned();
    impl_->ops->begin_lame_duck();  // draining: readiness fails, rivet_draining says 1
    if (impl_->admin_server) impl_->admin_server->drain();
    impl_->server->drain();
    impl_->server->wait();
    impl_->pool->stop();
    impl_->admin_server.reset();
    impl_->ops->stop();  // every answered request is in the access log file now
    impl_->loops.reset();
    impl_->relay.reset();   // the loops' threads have ended; their loops are still there
    impl_->server.reset();  // WebSockets still open end here: their on_close sees the topics
    impl_->topics.reset();
    impl_->stream_topics.clear();
    impl_->pool.reset();
    impl_->ops.reset();
    impl_->tls_context.reset();
}

void App::begin_lame_duck() {
    if (!impl_->server) throw std::logic_error("the app is not running");
    impl_->shutdown.trigger();
    // The loops first: a client that sees /healthz answer 503 then finds every new answer
    // ending its connection.
    impl_->server->begin_lame_duck();
    impl_->ops->begin_lame_duck();
}

void App::set_ready(bool ready) {
    impl_->ready.store(ready, std::memory_order_relaxed);
}

ShutdownSignal App::shutdown_signal() const {
    return impl_->shutdown;
}

App& App::on_shutdown(std::function<void()> fn) {
    impl_->shutdown.subscribe(std::move(fn));
    return *this;
}

std::string App::reconfigure(const RunOptions& options) {
    if (!impl_->server) throw std::logic_error("the app is not running");
    OperationsOptions ops = options.ops;
    ops.admin.admin_port = impl_->options.ops.admin.admin_port;  // the listener stays put
    ops.admin.admin_host = impl_->options.ops.admin.admin_host;
    std::string problems = impl_->ops->reconfigure(ops);
    if (auto e = impl_->reload_tls(options.tls); !e.empty())
        problems += problems.empty() ? e : "; " + e;
    impl_->server->reconfigure(impl_->live_config(options));  // host, port and threads stay
    impl_->options.limits = options.limits;
    impl_->options.timeouts = options.timeouts;
    impl_->options.ops = ops;
    impl_->ops->note_reload(problems.empty() ? app::ReloadOutcome::Result::Applied
                                             : app::ReloadOutcome::Result::Refused);
    return problems;
}

void App::reload_refused() {
    if (!impl_->server) throw std::logic_error("the app is not running");
    impl_->ops->note_reload(app::ReloadOutcome::Result::Refused);
}

}  // namespace rivet
