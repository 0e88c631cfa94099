// What the App decides before a request reaches routing: a route's own body limit, and the
// shape of the answers to requests the engine refuses (400, 413, 414, 431 ...), which go through
// the error handler and every middleware's after() like the App's own errors.
#include "app/app_impl.hpp"
#include "app/error_response.hpp"
#include "app/server_options.hpp"

namespace rivet {

void App::Impl::plan_body(const http::RequestHead& head, engine::BodyPlan& plan) {
    // A second route lookup, only for requests with a body in apps with per-route limits: a
    // GET /hello pays nothing. The match is not carried on to serve(): its parameters are views
    // into a head that moves while the body arrives, and finding them is the lookup itself.
    if (!routes_plan_bodies || head.framing == http::BodyFraming::None) return;
    auto match = router.find(head.method, head.path);
    if (match.kind != app::Router::Match::Found) return;
    const RouteEntry& route = routes[match.route];
    if (route.max_body != 0) plan.limit = route.max_body;
    if (route.streamed) plan.mode = engine::BodyPlan::Mode::Streamed;
}

void App::Impl::answer_protocol_error(const engine::ProtocolError& refused,
                                      engine::ErrorReply& reply) {
    // A refusal inside the head has no head: the request the middleware sees is empty (no path,
    // no fields), and only the app-wide middleware runs.
    static const http::RequestHead kNoHead{};
    static const app::RouteParams kNoParams{};
    const http::RequestHead& head = refused.head ? *refused.head : kNoHead;
    Request req(head, {}, kNoParams);
    Response res;
    app::MiddlewareChain::Slice slice;
    middleware.select(head.path, slice);
    Call call{req, res, slice};
    std::string_view message = *refused.reason ? refused.reason : app::reason_of(refused.status);
    app::MiddlewareChain::run_refused(slice, req);  // e.g. the request id, for the error body
    try {
        error(call, refused.status, message);
    } catch (...) {  // e.g. a status Response refuses: the engine's plain text answers instead
        return;
    }
    if (refused.retry_after_s) res.header("Retry-After", std::to_string(refused.retry_after_s));
    finish_middleware(call, refused.loop, /*all=*/true);
    reply.respond(app::view_of(res));
}

}  // namespace rivet
