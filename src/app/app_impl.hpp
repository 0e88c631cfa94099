// App::Impl: what an App holds (routes, middleware, the running server) and how it serves a
// request. Registration and start/stop are in app.cpp; serving in app_serve.cpp.
#pragma once

#include <atomic>
#include <rivet/app.hpp>

#include <functional>
#include <memory>
#include <vector>

#include "app/async/async_call.hpp"
#include "app/async/loop_services.hpp"
#include "app/async/worker_pool.hpp"
#include "app/middleware/middleware_chain.hpp"
#include "app/operations/operations.hpp"
#include "app/routing/router.hpp"
#include "app/service_notifier.hpp"
#include "app/websocket/stream_topics.hpp"
#include "app/websocket/topic_relay.hpp"
#include "app/websocket/topics.hpp"
#include "app/websocket/websocket_core.hpp"
#include "engine/exchange.hpp"
#include "engine/server.hpp"
#include "tls/context.hpp"

namespace rivet {

namespace app {
struct BodyWorkCall;  // app_body_work.cpp
}

struct App::Impl final : engine::Application, app::AsyncAnswers {
    struct RouteEntry {
        Handler handler;
        bool offload = false;
        std::function<bool(const Request&)> offload_when;
        StaticFiles* files = nullptr;  // a static mount's route
        CoroutineHandler coroutine;    // or a handler that waits (app/async/async_call.hpp)
        AsyncReplyHandler async_reply;
        uint64_t max_body = 0;                 // 0: the server's limits.max_body
        bool streamed = false;                 // the body comes as a BodyStream
        Priority priority = Priority::Normal;  // among offloaded requests waiting for a worker
    };

    using Trace = app::Operations::Trace;

    // One request between its middleware's before() and after(), for the framework's code that
    // answers it: inline on the loop, or later from an app::AsyncCall that lives on the heap.
    struct Call {
        Request& req;
        Response& res;
        app::MiddlewareChain::Slice& slice;
        // Header fields of `res` set before the handler ran (by middleware): an error answer
        // keeps them, and drops those of a handler that failed.
        size_t kept_fields = 0;
    };

    app::Router router;
    std::vector<RouteEntry> routes;
    // The routes without the static mounts: tells a file's 404 that the path is a route's.
    app::Router routes_only;
    std::vector<std::unique_ptr<StaticFiles>> mounts;
    bool adding_mount = false;
    std::vector<app::RouteLabel> labels;  // by route id, for the metrics
    bool routes_plan_bodies = false;      // some route has its own body limit: plan_body looks
    app::MiddlewareChain middleware;
    ErrorHandler error_handler;  // null: app::default_error_body
    RunOptions options;
    std::unique_ptr<app::WorkerPool> pool;
    std::unique_ptr<engine::Server> server;
    std::unique_ptr<app::Operations> ops;  // logs, rate limits, metrics
    std::atomic<bool> ready{true};         // App::set_ready; the health checks read it (ops)
    // How the process leaves: App::hand_over and App::run's stop signal race for it (an upgrade
    // that becomes ready while an outside SIGTERM drains us must not win).
    enum class Ending : uint8_t { Serving, HandedOver, Stopping };
    std::atomic<Ending> ending{Ending::Serving};
    // What App::run tells a service manager ($NOTIFY_SOCKET): made by the first run() and kept
    // until the App goes, since hand_over() may use it from another thread as run() returns.
    std::unique_ptr<app::ServiceNotifier> notifier;
    std::unique_ptr<engine::Server> admin_server;  // admin endpoints on a port of their own
    // App::ws routes (their handshake handlers share them) and the topics they publish to.
    std::vector<std::shared_ptr<app::WebSocketRoute>> websocket_routes;
    std::unique_ptr<app::Topics> topics;     // while running
    app::StreamTopics stream_topics;         // event streams subscribed (App::subscribe)
    std::unique_ptr<app::TopicRelay> relay;  // RunOptions::pubsub Redis, while running
    // App::publish's delivery to this instance's subscribers (and the relay's, from Redis).
    void deliver_locally(std::string_view topic, std::string_view message, MessageKind kind);
    ShutdownSignal shutdown;  // fired once, at the stop's first sign (App::shutdown_signal)
    std::unique_ptr<app::EventLoops> loops;  // rivet::EventLoop of each I/O loop

    // --- app_tls.cpp --- TLS: the context is replaced by reloads (on the thread that
    // reconfigures); what the loops read is fixed before they start.
    std::shared_ptr<const tls::Context> tls_context;  // null: no TLS listener
    bool redirect_http = false;                       // plain requests get a 308 to https://
    std::string hsts;                                 // Strict-Transport-Security; empty: none
    uint64_t tls_reload_attempts = 0;  // tells App::run whether on_reload reloaded already
    // Checks options.tls and loads its certificates into `config` (nothing when TLS is off).
    void start_tls(const RunOptions& options, engine::ServerConfig& config);
    void print_tls_listening() const;  // the startup lines
    // Loads `next`'s certificates in place of the current ones; returns the problem (the old
    // ones are kept) or "" when they were replaced or TLS is off.
    std::string reload_tls(const TlsOptions& next);
    // Tells the metrics the current certificates' expiry (at the start and after a reload).
    void publish_certificates();
    // The engine's live settings from `options`: the listener's own as started, the current
    // TLS context.
    engine::ServerConfig live_config(const RunOptions& options) const;
    void redirect_to_https(engine::Exchange& ex);

    // --- app_serve.cpp ---
    void serve(engine::Exchange& ex) override;
    void on_tick(unsigned loop) override {
        for (auto& m : mounts) m->sweep(loop);  // cached files idle past their TTL close
        // Closed event streams are forgotten within a second, and their topics' shared
        // subscriptions end with them (app/websocket/stream_topics.hpp).
        if (loop == 0) stream_topics.sweep();
    }
    void on_protocol_error(unsigned loop, const engine::PeerIp& peer, int status) override {
        ops->protocol_error(loop, peer, status);
    }
    // --- app_refusals.cpp ---
    void plan_body(const http::RequestHead& head, engine::BodyPlan& plan) override;
    void answer_protocol_error(const engine::ProtocolError& error,
                               engine::ErrorReply& reply) override;
    // `verdict`: the operations' (Pass, RateLimited: 429, LimitUnavailable: 503).
    void route_request(engine::Exchange& ex, Trace& trace, app::Operations::Verdict verdict,
                       unsigned retry_after_s);
    // --- app_shared_limit.cpp --- A request whose rate limit is in Redis: held (its answer
    // deferred) until Redis decides, then served through an Exchange of its own.
    void hold_for_shared_limit(engine::Exchange& ex, Trace& trace);
    // Routes and runs the handler after before(); false when the answer comes later (offload).
    bool run_route(engine::Exchange& ex, Call& call, app::Router::Match& match, Trace& trace);
    // What routing answers itself (OPTIONS *, 404, 405: answered in call, null returned), else
    // the matched route's entry. `match`: the router's for `head` (unused for OPTIONS *).
    const RouteEntry* routed(Call& call, const app::Router::Match& match,
                             const http::RequestHead& head);
    // A static mount's 404 or 403, made the framework's error answer (405 when routes serve the
    // path with other methods).
    void answer_files_refusal(Call& call, const http::RequestHead& head);
    // --- app_waiting.cpp --- A request some of whose middleware waits (Middleware::waits): its
    // middleware, handler and after() run as one coroutine.
    void serve_waiting(engine::Exchange& ex, Call& call, app::Router::Match& match, Trace& trace);
    Task<> run_waiting_chain(Request& req, Response& res, app::MiddlewareChain::Slice slice,
                             app::Router::Match match, unsigned loop);
    Task<> run_waiting_route(Call& call, const app::Router::Match& match, unsigned loop);
    // --- app_async.cpp --- Answers that come later, each an app::AsyncCall.
    // Hands the handler to the worker pool (its answer through the Deferred), or answers 503
    // at once when the pool's queue is full.
    void run_offloaded(const RouteEntry& route, engine::Exchange& ex, Call& call, Trace& trace);
    // A coroutine or AsyncReply handler; false when the answer comes later (or went already).
    bool run_waiting(const RouteEntry& route, engine::Exchange& ex, Call& call, Trace& trace);
    // app::AsyncAnswers: a later answer's end (offloaded or waiting), through the same error
    // answer and after() as any; and the count of waiting ones whose client went away.
    void answer(app::AsyncCall& call, engine::Exchange* now) override;
    void cancelled(app::AsyncCall& call) override;
    void waiting(app::AsyncCall& call, engine::Exchange& ex) override;
    // Turns the exception being handled into the error answer of `call` (HttpError: its status,
    // message and fields; anything else: logged, counted, 500). Call only inside a catch.
    void answer_exception(Call& call, unsigned loop, bool from_handler);
    void error(Call& call, int status, std::string_view message);
    // after() of the request's middleware; one that throws turns the answer into an error.
    void finish_middleware(Call& call, unsigned loop, bool all = false);
    // --- app_body_work.cpp --- Where every answer that went through after() leaves: at once,
    // or, when an after() left work on its body (detail::BodyWork: compressing a large one),
    // once a worker did it, so that the loop serves other requests meanwhile.
    void respond(engine::Exchange& ex, const Request& req, Response& res, const Trace& trace);
    // An answer that comes later (through `call.later`): logged, then sent, after its body work.
    void send_later(app::AsyncCall& call);
    // Hands the body work to the pool (or, when its queue is full, sends the body as it is).
    void work_on_body(std::shared_ptr<app::BodyWorkCall> call);
    void send_worked(app::BodyWorkCall& call);  // on the loop: the log, then the answer
};

}  // namespace rivet
