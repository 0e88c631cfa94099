// A request some of whose middleware waits (Middleware::waits: a session kept in Redis). Its
// before()s, handler and after()s run as one coroutine on the request's loop, through the same
// coroutine call as a coroutine handler (app/async/coroutine_call.cpp): a request that never
// waits is answered before serve() returns; one that does is copied (detached) at its first
// wait and answered through its Deferred, or dropped when its client goes meanwhile.
#include <exception>

#include <rivet/async.hpp>

#include "app/app_impl.hpp"
#include "app/request/request_access.hpp"

namespace rivet {

void App::Impl::serve_waiting(engine::Exchange& ex, Call& call, app::Router::Match& match,
                              Trace& trace) {
    // Routing does not depend on what before() does, so it comes first here: the request's
    // parameters and the route's label in the metrics are then known from the start.
    const auto& head = ex.head();
    if (!(head.method == http::Method::Options && head.path == "*")) {
        router.find(head.method, head.path, match);
        if (match.kind == app::Router::Match::Found) trace.route = match.route;
    }
    const unsigned loop = ex.loop_index();
    // The coroutine runs after() itself: the coroutine call's answer finds nothing left to run.
    app::MiddlewareChain::Slice done;
    // Called once, inside run_coroutine: captures by reference are enough.
    const app::CoroutineHandler chain = [this, &call, &match, loop](Request& req, Response& res) {
        return run_waiting_chain(req, res, call.slice, match, loop);
    };
    app::run_coroutine(chain, ex, std::move(call.req), std::move(call.res), done,
                       call.res.headers().size(), trace, *this);
}

// `slice` and `match` by value: they live in the frame, past route_request's return.
Task<> App::Impl::run_waiting_chain(Request& req, Response& res, app::MiddlewareChain::Slice slice,
                                    app::Router::Match match, unsigned loop) {
    Call call{req, res, slice, res.headers().size()};
    bool in_handler = false;
    try {
        bool go_on = true;
        while (go_on && slice.ran < slice.size) {
            Middleware* m = slice.items[slice.ran++];
            go_on = m->waits() ? co_await m->before_waiting(req, res) : m->before(req, res);
        }
        if (go_on) {
            call.kept_fields = res.headers().size();
            in_handler = true;
            co_await run_waiting_route(call, match, loop);
        }
    } catch (...) {
        answer_exception(call, loop, in_handler);
    }
    for (size_t i = slice.ran; i-- > 0;) {
        Middleware* m = slice.items[i];
        try {
            if (m->waits())
                co_await m->after_waiting(req, res);
            else
                m->after(req, res);
        } catch (...) {  // the others still run, as in finish_middleware
            answer_exception(call, loop, false);
        }
    }
}

Task<> App::Impl::run_waiting_route(Call& call, const app::Router::Match& match, unsigned loop) {
    const http::RequestHead& head = app::RequestAccess::head(call.req);
    const RouteEntry* route = routed(call, match, head);
    if (!route) co_return;
    if (route->coroutine) {
        co_await route->coroutine(call.req, call.res);
    } else if (route->async_reply) {
        // Its reply goes to a Deferred of its own, which this coroutine cannot hand it.
        ops->handler_threw(loop, call.req.path(),
                           "an AsyncReply handler behind a waiting middleware (use a coroutine)");
        error(call, 500, "Internal Server Error");
    } else if (route->offload || (route->offload_when && route->offload_when(call.req))) {
        co_await on_workers([&call, route] { route->handler(call.req, call.res); });
    } else {
        route->handler(call.req, call.res);
        if (route->files) answer_files_refusal(call, head);
    }
}

}  // namespace rivet
