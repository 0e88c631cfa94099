// A request whose rate limit lives in Redis (RateLimitOptions::redis): its answer is deferred,
// its head and body copied, and when Redis has decided (on the same loop) it is served as any
// other, through an Exchange whose answers go to that Deferred. Its client may leave meanwhile:
// the Deferred is then cancelled, and the request is not served at all.
#include <memory>
#include <string>
#include <utility>

#include "app/app_impl.hpp"
#include "app/request/request_access.hpp"

namespace rivet {

namespace {

// A plain-text answer ("Location: /x\r\n" as its extra fields) made an owned Reply.
engine::Reply simple_reply(const engine::Answer& a) {
    engine::Reply r;
    r.status = a.status;
    r.content_type = "text/plain";
    r.body = std::string(a.body);
    r.field_lines = std::string(a.extra_fields);  // the same lines
    return r;
}

// The held request and where its answers go: every answer of the replayed Exchange completes
// the Deferred taken when it was held; a route that answers later itself gets that Deferred.
struct HeldRequest final : engine::Responder {
    HeldRequest(Request&& r, engine::Connection& c) : request(std::move(r)), conn(&c) {}

    engine::Deferred answer(const http::RequestHead*, const engine::Answer& a) override {
        if (a.kind == engine::Answer::Kind::Later) return std::move(later);
        if (a.kind == engine::Answer::Kind::Reply)
            later.complete(engine::Reply::copy_of(*a.reply));
        else
            later.complete(simple_reply(a));
        return {};
    }
    engine::Connection& connection() override { return *conn; }

    Request request;  // detached: owns its head and body
    engine::Connection* conn;
    unsigned loop = 0;  // the request's I/O thread, where the verdict comes back
    engine::Deferred later;
    app::Operations::Trace trace;
};

}  // namespace

void App::Impl::hold_for_shared_limit(engine::Exchange& ex, Trace& trace) {
    const app::RouteParams no_params;
    auto held = std::make_shared<HeldRequest>(
        Request(ex.head(), ex.body(), no_params, &ex).detach(), ex.connection());
    held->trace = trace;
    held->loop = ex.loop_index();
    held->later = ex.defer();
    ops->decide_shared(
        ex.loop_index(), trace, [this, held](app::Operations::Verdict verdict, unsigned retry) {
            // On the request's loop. Cancelled: the connection (or stream) ended; not cancelled:
            // it is still open, so the replayed Exchange may ask it for its facts.
            if (held->later.cancelled() || !held->later.valid()) return;
            engine::Exchange replay(*held, held->loop, app::RequestAccess::head(held->request),
                                    app::RequestAccess::body(held->request));
            if (verdict == app::Operations::Verdict::Pass && redirect_http && !replay.tls().secure)
                redirect_to_https(replay);  // app_tls.cpp
            else
                route_request(replay, held->trace, verdict, retry);
            if (replay.status() != 0) ops->finish(replay, held->trace);
        });
}

}  // namespace rivet
