// rivet::App: routes, handlers and the server that runs them.
//
//   rivet::App app;
//   app.get("/hello", [](rivet::Request&, rivet::Response& res) { res.text("Hello, World!"); });
//   app.post("/render", render_pdf).offload();   // runs on the worker pool, not on an I/O loop
//   app.get("/slow", [](rivet::Request&, rivet::Response& res) -> rivet::Task<> {
//       co_await rivet::sleep(200ms);              // waits without holding the loop
//       res.text("done");
//   });
//   app.get("/cb", [](rivet::Request&, rivet::AsyncReply reply) { ... reply.send(res); });
//   app.run({.port = 8080});                    // Ctrl-C drains and returns
#pragma once

#include <sys/types.h>

#include <concepts>
#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include <rivet/async_reply.hpp>
#include <rivet/event_loop.hpp>
#include <rivet/event_stream.hpp>
#include <rivet/http_error.hpp>
#include <rivet/limits.hpp>
#include <rivet/method.hpp>
#include <rivet/middleware.hpp>
#include <rivet/operations.hpp>
#include <rivet/priority.hpp>
#include <rivet/request.hpp>
#include <rivet/response.hpp>
#include <rivet/shutdown.hpp>
#include <rivet/static_files.hpp>
#include <rivet/task.hpp>
#include <rivet/tls.hpp>
#include <rivet/websocket.hpp>

namespace rivet {

using Handler = std::function<void(Request&, Response&)>;
// Handlers that wait without blocking (rivet/async.hpp): a coroutine returning Task<>, run on
// the request's I/O loop, or the callback form answering through an AsyncReply.
using CoroutineHandler = std::function<Task<>(Request&, Response&)>;
using AsyncReplyHandler = std::function<void(Request&, AsyncReply)>;

template <class F>
concept CoroutineHandlerFn = std::same_as<std::invoke_result_t<F&, Request&, Response&>, Task<>>;
template <class F>
concept AsyncReplyHandlerFn =
    std::is_invocable_v<F&, Request&, AsyncReply> && !std::is_invocable_v<F&, Request&, Response&>;
template <class F>
concept WaitingHandlerFn = CoroutineHandlerFn<F> || AsyncReplyHandlerFn<F>;
// Shapes the body of every error response (rivet/http_error.hpp): the framework's own (404, 405,
// 413, 431, 500, 503 ...), and HttpErrors thrown by handlers and middleware. Header fields already
// set (by middleware, by the HttpError) stay. The default writes {"error": "Not Found"}.
using ErrorHandler = std::function<void(const Request&, Response&, const ErrorInfo&)>;

// Where App::publish's messages go: this instance's subscribers only, or every instance's
// that names the same Redis (RunOptions::pubsub).
enum class PubSub : uint8_t { Local, Redis };

struct RunOptions {
    std::string host = "0.0.0.0";
    uint16_t port = 8080;
    unsigned threads = 0;        // I/O loops; 0 = one per usable CPU
    unsigned workers = 0;        // worker pool for offloaded routes; 0 = one per usable CPU
    size_t queue = 1024;         // offloaded requests waiting for a worker; past it: 503
    unsigned retry_after_s = 1;  // Retry-After of that 503
    Limits limits{};             // request sizes and connection limits (rivet/limits.hpp)
    Timeouts timeouts{};
    // PROXY protocol (v1 and v2, as HAProxy's send-proxy / send-proxy-v2 send it): a connection
    // from a trusted address may begin with a header naming the client, and the access log, the
    // rate limit and Request's client address then see that client. The header is optional
    // (health checks send none); an invalid one closes the connection. Headers from other
    // addresses are never read (they are then a bad request). `proxy_trusted`: addresses or CIDR
    // networks ("10.0.0.0/8", "::1"); empty means 127.0.0.0/8 and ::1. A bad entry makes start()
    // throw std::invalid_argument naming it. Both change only at a restart.
    bool proxy_protocol = false;
    std::vector<std::string> proxy_trusted{};
    // HTTP/2 (RFC 9113) beside HTTP/1.1: the TLS listener offers "h2" first in ALPN, and the
    // plain port takes h2c from clients that start with the HTTP/2 preface (prior knowledge; no
    // Upgrade from HTTP/1.1). Handlers, middleware and static files run unchanged on each
    // stream (Request::version_major() says 2). false: ALPN offers only "http/1.1" and a
    // preface is a bad request. Changes only at a restart.
    bool http2 = true;
    // HTTPS on a second listener (rivet/tls.hpp); off while tls.certificates is empty. A bad
    // value makes start() throw std::invalid_argument, a certificate that does not load
    // std::runtime_error. SIGHUP re-reads the certificate files; TLS cannot be turned on or off
    // then, nor its port moved.
    TlsOptions tls{};
    bool quiet = false;       // no "listening on" line
    OperationsOptions ops{};  // logs, rate limiting, admin endpoints (rivet/operations.hpp)
    // Redis: App::publish reaches the subscribers of every instance subscribed to the Redis at
    // ops.rate_limit.redis (one Redis address for all shared state; the rate limit need not be
    // on), through Redis pub/sub. start() throws std::invalid_argument when that is empty.
    PubSub pubsub = PubSub::Local;
    // run() calls this on SIGHUP (after reopening the log files), e.g. to re-read a
    // configuration file and pass it to reconfigure().
    std::function<void()> on_reload{};
    // start() calls this once every listening socket is bound and the log files are open, but
    // before any loop accepts, and before the listening line: the moment to drop root
    // privileges (ports below 1024 and root-owned log files need them; no request may be
    // served with them). If it throws, start() closes the sockets and rethrows.
    std::function<void()> on_bound{};
    // run() calls this once the loops serve, before it waits for signals (e.g. to write a pid
    // file); if it throws, run() stops the server and rethrows.
    std::function<void()> on_started{};

    // Handing over without closing the port (systemd socket activation, an in-place upgrade).
    // Already-bound listening TCP sockets to serve instead of binding host:port; the App owns
    // them (closes them when it stops) and accepts from every one: with fewer than `threads`,
    // the other loops get sockets of their own beside them on the same address.
    std::vector<int> listen_fds{};
    // The same for the admin listener; needs ops.admin.admin_port set (its value is then
    // unused: the socket's own port counts).
    std::vector<int> admin_listen_fds{};
    // The same for the TLS listener; needs tls.certificates (tls.port is then unused).
    std::vector<int> tls_listen_fds{};
    // run() calls this on SIGUSR2, on its own thread (e.g. to start a new binary that inherits
    // listening_fds()); without it, SIGUSR2 is logged and ignored.
    std::function<void()> on_upgrade{};
};

class App {
public:
    // Options of one route, returned by get(), post(), ...
    class Route {
    public:
        // Runs the handler on the worker pool, not on the I/O loop: for CPU-heavy work.
        Route& offload(bool on = true);
        // Offloads only the requests for which `heavy` says so (e.g. a large input); the
        // predicate runs on the I/O loop and must be cheap.
        Route& offload_when(std::function<bool(const Request&)> heavy);
        // This route's own request body limit, in place of RunOptions::limits.max_body (larger
        // or smaller): past it the request is answered 413 before its body is read (with a
        // Content-Length), or as soon as a chunked body crosses it.
        Route& max_body(uint64_t bytes);
        // The body is not buffered: the handler, a coroutine, reads it piece by piece with
        // req.body_stream() (rivet/body_stream.hpp), in bounded memory and with backpressure.
        // Throws std::logic_error when the route's handler is not a coroutine.
        Route& stream_body();
        // The order of this route's offloaded requests among those waiting for a worker, and
        // how far they may fill it (rivet/priority.hpp); default Normal.
        Route& priority(Priority level);

    private:
        friend class App;
        Route(App& app, uint32_t id) : app_(app), id_(id) {}
        App& app_;
        uint32_t id_;
    };

    App();
    ~App();
    App(const App&) = delete;
    App& operator=(const App&) = delete;

    Route get(std::string_view pattern, Handler handler);
    Route post(std::string_view pattern, Handler handler);
    Route put(std::string_view pattern, Handler handler);
    Route patch(std::string_view pattern, Handler handler);
    Route del(std::string_view pattern, Handler handler);
    Route route(Method method, std::string_view pattern, Handler handler);

    // The same for handlers that wait (coroutines, AsyncReply), chosen by their signature.
    // offload() does not apply to them: they run on the loop and use on_workers() for CPU work.
    template <WaitingHandlerFn F>
    Route route(Method method, std::string_view pattern, F fn) {
        if constexpr (CoroutineHandlerFn<F>)
            return add_coroutine(method, pattern, CoroutineHandler(std::move(fn)));
        else
            return add_async_reply(method, pattern, AsyncReplyHandler(std::move(fn)));
    }
    template <WaitingHandlerFn F>
    Route get(std::string_view pattern, F fn) {
        return route(Method::Get, pattern, std::move(fn));
    }
    template <WaitingHandlerFn F>
    Route post(std::string_view pattern, F fn) {
        return route(Method::Post, pattern, std::move(fn));
    }
    template <WaitingHandlerFn F>
    Route put(std::string_view pattern, F fn) {
        return route(Method::Put, pattern, std::move(fn));
    }
    template <WaitingHandlerFn F>
    Route patch(std::string_view pattern, F fn) {
        return route(Method::Patch, pattern, std::move(fn));
    }
    template <WaitingHandlerFn F>
    Route del(std::string_view pattern, F fn) {
        return route(Method::Delete, pattern, std::move(fn));
    }

    // A WebSocket endpoint (rivet/websocket.hpp) at GET `pattern`: the handshake runs after
    // the rate limit and the middleware, then the connection speaks RFC 6455 with `behavior`.
    Route ws(std::string_view pattern, WebSocketBehavior behavior);
    // From any thread, while running: `message` goes to every WebSocket subscribed to `topic`
    // on every loop (one frame made once, compressed at most once) and, when it is text, to
    // every event stream subscribed to it; with RunOptions::pubsub Redis, on every instance
    // too. Publishing must end before stop() returns.
    void publish(std::string_view topic, std::string_view message,
                 MessageKind kind = MessageKind::Text);
    // From any thread, while running: every text message published to `topic` reaches
    // `stream` as an event named `topic` (data: the message), until the stream closes. Binary
    // messages do not: an event stream carries text.
    void subscribe(std::string_view topic, const EventStream& stream);

    // While running: I/O loop `i` (0 .. threads-1), to post work or set timers from outside.
    EventLoop& loop(unsigned i);
    unsigned loops() const;

    // While running: the listening sockets, to hand over to a new process (RunOptions::
    // listen_fds there). They stay open until stop() begins; a child forked before that
    // holds its own copies.
    std::vector<int> listening_fds() const;
    std::vector<int> admin_listening_fds() const;  // empty without an admin listener
    std::vector<int> tls_listening_fds() const;    // empty without TLS
    uint16_t tls_port() const;                     // the TLS listener's bound port; 0: no TLS

    // Middleware (rivet/middleware.hpp) for every request, or for the paths under `prefix`
    // ("/api" covers "/api" and "/api/..."). Must be added before the server starts.
    App& use(std::shared_ptr<Middleware> middleware);
    App& use(std::string_view prefix, std::shared_ptr<Middleware> middleware);
    App& on_error(ErrorHandler handler);

    // Serves the files under `root` at GET/HEAD `mount`/... (see rivet/static_files.hpp).
    // Routes win over files: with a mount at "/", GET /hello still reaches its handler, and a
    // path whose routes are all for other methods answers 405 rather than a file's 404.
    // Throws std::invalid_argument for a mount that is not a path, and for a cache_control,
    // default_type or mime_types entry that holds CR, LF or NUL.
    StaticFiles& serve_static(std::string_view mount, std::string root, StaticOptions options = {});
    StaticStats static_stats() const;  // every mount's cache counters, summed

    // Serves forever; SIGINT/SIGTERM drain in-flight requests and return (after the lame-duck
    // period of timeouts.drain_grace_ms, which a second SIGINT/SIGTERM cuts short). Throws
    // std::runtime_error when the address cannot be bound. Under a service manager that sets
    // NOTIFY_SOCKET (systemd's Type=notify) it says READY=1 once serving (after on_started),
    // RELOADING=1 and READY=1 around each SIGHUP, STOPPING=1 at the stop, with STATUS= lines,
    // and with WATCHDOG_USEC set pings WATCHDOG=1 at half of it while every I/O loop runs.
    void run(const RunOptions& options = {});

    // For embedding and tests: start without taking over signals, then stop().
    uint16_t start(const RunOptions& options);  // returns the bound port
    void stop();                                // drains and waits
    // While running, from any thread: the lame-duck period before a stop(). Everything is
    // still accepted and served, but each answer says "Connection: close" and /healthz and
    // /readyz answer 503, so that load balancers take the instance out before it stops listening.
    void begin_lame_duck();
    // Whether this instance should get traffic, from any thread, before start() or while
    // running: set_ready(false) makes /readyz and /healthz answer 503 "unready" (balancers and
    // Kubernetes take it out) while everything else is still served and /livez stays 200 (a
    // lost database is no reason to restart); set_ready(true) puts it back. Ready by default.
    // The lame duck fails readiness whatever this says.
    void set_ready(bool ready);
    // While running, from any thread, once another process serves the same listening sockets
    // (an in-place upgrade): stop accepting at once and end each open connection after its
    // next answer. /healthz keeps answering 200 (the checks now reach the other process);
    // App::run's next SIGINT/SIGTERM still waits timeouts.drain_grace_ms for those answers.
    // False, and nothing done, when App::run is already stopping: the other process should
    // then be stopped too. `successor_pid` (the other process), when App::run tells a service
    // manager, is named to it as the service's main process now (MAINPID=).
    bool hand_over(pid_t successor_pid = 0);

    // The stop's first sign (rivet/shutdown.hpp): fired once, by begin_lame_duck(), stop(),
    // hand_over() or App::run's SIGINT/SIGTERM, whichever comes first, before the drain
    // begins. on_shutdown(fn) runs fn then, on the thread that stops (App::run's main thread
    // on a signal); added after it fired, at once. Event streams (rivet/event_stream.hpp) need
    // nothing of it: the drain ends them.
    ShutdownSignal shutdown_signal() const;
    App& on_shutdown(std::function<void()> fn);

    // While running: applies what can change live (logs, rate limits, admin endpoints on the
    // main port, limits and timeouts, TLS certificates: re-read from options.tls's files, the
    // old ones kept if the new ones fail); the address, threads, workers and whether TLS is on
    // stay. Returns the problems (e.g. a log file that cannot be opened), empty when none.
    // /metrics shows how it went: rivet_config_last_reload_successful is 1 when there were
    // none, 0 otherwise.
    std::string reconfigure(const RunOptions& options);
    // While running: a reload refused before reconfigure() could be called (a configuration
    // file that does not parse); /metrics shows rivet_config_last_reload_successful 0 until a
    // reconfigure() succeeds.
    void reload_refused();

private:
    Route add_coroutine(Method method, std::string_view pattern, CoroutineHandler handler);
    Route add_async_reply(Method method, std::string_view pattern, AsyncReplyHandler handler);
    void start_operations(const RunOptions& options);
    struct Impl;
    std::unique_ptr<Impl> impl_;
};

}  // namespace rivet
