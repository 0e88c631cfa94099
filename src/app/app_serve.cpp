// How the App answers a request: the operations' checks, the middleware's before(), routing, the
// handler (inline; one whose answer comes later goes to app_async.cpp), error answers, the
// middleware's after(), then the engine.
#include <exception>
#include <string>

#include "app/app_impl.hpp"
#include "app/error_response.hpp"
#include "app/request/body_stream.hpp"
#include "app/server_options.hpp"

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

void App::Impl::serve(engine::Exchange& ex) {
    Trace trace;
    trace.start_ns = app::Operations::start_ns();
    unsigned retry_after_s = 0;
    auto verdict = ops->intercept(ex, trace, retry_after_s);  // the admin endpoints answer here
    if (verdict == app::Operations::Verdict::AskShared)
        return hold_for_shared_limit(ex, trace);  // app_shared_limit.cpp
    if (verdict == app::Operations::Verdict::Pass && redirect_http && !ex.tls().secure)
        redirect_to_https(ex);  // app_tls.cpp
    else if (verdict != app::Operations::Verdict::Answered)
        route_request(ex, trace, verdict, retry_after_s);
    if (ex.status() != 0) ops->finish(ex, trace);  // a deferred answer is logged when it is done
}

void App::Impl::route_request(engine::Exchange& ex, Trace& trace, app::Operations::Verdict verdict,
                              unsigned retry_after_s) {
    const auto& head = ex.head();
    app::Router::Match match;  // routing fills its params, which `req` shows from then on
    Request req(head, ex.body(), match.params, &ex);
    if (ex.streamed())  // a stream_body() route: its handler pulls the body
        detail::attach_body_stream(
            req, std::make_shared<detail::BodyStreamState>(detail::BodyStreamState{ex.source()}));
    Response res;
    // HSTS on every answer over TLS (RFC 6797 §7.2: never over plain HTTP); set first, so that
    // error answers keep it as they keep what middleware set.
    if (!hsts.empty() && ex.tls().secure) res.header("Strict-Transport-Security", hsts);
    app::MiddlewareChain::Slice slice;
    middleware.select(head.path, slice);
    Call call{req, res, slice, res.headers().size()};
    const unsigned loop = ex.loop_index();
    if (verdict == app::Operations::Verdict::RateLimited ||
        verdict == app::Operations::Verdict::LimitUnavailable) {
        // Refused before any before() ran; after() of every middleware of the path still sees it
        // (a browser needs the CORS fields to read a 429), and their refused() before the body.
        app::MiddlewareChain::run_refused(slice, req);
        if (verdict == app::Operations::Verdict::RateLimited)
            error(call, 429, "Too Many Requests");
        else
            error(call, 503, "Service Unavailable: the shared rate limit cannot be checked");
        res.header("Retry-After", std::to_string(retry_after_s));
        finish_middleware(call, loop, /*all=*/true);
        return respond(ex, req, res, trace);
    }
    if (slice.waits) return serve_waiting(ex, call, match, trace);  // app_waiting.cpp
    bool in_handler = false;
    try {
        if (app::MiddlewareChain::run_before(slice, req, res)) {
            call.kept_fields = res.headers().size();
            in_handler = true;
            if (!run_route(ex, call, match, trace)) return;  // answered later
        }
    } catch (...) {
        answer_exception(call, loop, in_handler);
    }
    finish_middleware(call, loop);
    respond(ex, req, res, trace);
}

bool App::Impl::run_route(engine::Exchange& ex, Call& call, app::Router::Match& match,
                          Trace& trace) {
    const auto& head = ex.head();
    if (!(head.method == HttpMethod::Options && head.path == "*"))
        router.find(head.method, head.path, match);
    const RouteEntry* route = routed(call, match, head);
    if (!route) return true;
    trace.route = match.route;
    if (route->coroutine || route->async_reply) return run_waiting(*route, ex, call, trace);
    if (route->offload || (route->offload_when && route->offload_when(call.req))) {
        run_offloaded(*route, ex, call, trace);
        return false;
    }
    route->handler(call.req, call.res);
    if (route->files) answer_files_refusal(call, head);
    return true;
}

const App::Impl::RouteEntry* App::Impl::routed(Call& call, const app::Router::Match& match,
                                               const http::RequestHead& head) {
    Response& res = call.res;
    if (head.method == HttpMethod::Options && head.path == "*") {
        res.header("Allow", allow_list(~app::MethodSet(0)));
        return nullptr;
    }
    if (match.kind == app::Router::Match::NotFound) {
        error(call, 404, "Not Found");
        return nullptr;
    }
    if (match.kind == app::Router::Match::MethodNotAllowed) {
        std::string allow = allow_list(match.allowed);
        if (head.method == HttpMethod::Options)
            res.status(204);
        else
            error(call, 405, "Method Not Allowed");
        res.header("Allow", allow);
        return nullptr;
    }
    return &routes[match.route];
}

void App::Impl::answer_files_refusal(Call& call, const http::RequestHead& head) {
    Response& res = call.res;
    if (res.status() != 404 && res.status() != 403) return;
    // No such file, but routes serve this path with other methods: 405 says more.
    auto other = routes_only.find(head.method, head.path);
    if (res.status() == 404 && other.kind == app::Router::Match::MethodNotAllowed) {
        error(call, 405, "Method Not Allowed");
        res.header("Allow", allow_list(other.allowed));
    } else {  // the files' refusals are the framework's: the error handler shapes them
        error(call, res.status(), app::reason_of(res.status()));
    }
}

void App::Impl::answer_exception(Call& call, unsigned loop, bool from_handler) {
    // What a failed before() or after() had set stays; a failed handler's fields go.
    if (!from_handler) call.kept_fields = call.res.headers().size();
    try {
        throw;
    } catch (const HttpError& e) {
        error(call, e.status(), e.message());
        for (const auto& [name, value] : e.headers()) {
            try {
                call.res.header(name, value);
            } catch (const std::invalid_argument&) {
                ops->handler_threw(loop, call.req.path(), "an HttpError with an invalid field");
            }
        }
    } catch (const std::exception& e) {
        ops->handler_threw(loop, call.req.path(), e.what());
        error(call, 500, "Internal Server Error");
    } catch (...) {  // not a std::exception: still only this request fails
        ops->handler_threw(loop, call.req.path(), nullptr);
        error(call, 500, "Internal Server Error");
    }
}

void App::Impl::error(Call& call, int status, std::string_view message) {
    app::make_error(call.res, call.kept_fields, status, message, error_handler, call.req);
}

void App::Impl::finish_middleware(Call& call, unsigned loop, bool all) {
    auto& slice = call.slice;
    for (size_t i = all ? slice.size : slice.ran; i-- > 0;) {
        try {
            slice.items[i]->after(call.req, call.res);
        } catch (...) {  // the others still run: CORS must reach the error too
            answer_exception(call, loop, false);
        }
    }
}

}  // namespace rivet
