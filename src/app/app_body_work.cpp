// Where every answer that went through after() leaves the App. One an after() left work on
// (detail::BodyWork: rivet::compression() of a large body) is not sent from the loop at once:
// its Response moves to the worker pool, the way an offloaded handler's request does, the work
// runs there, and the answer comes back to its loop through Server::post and leaves through the
// request's Deferred. Meanwhile the loop serves its other connections: two 8 MiB bodies
// compressed inline held a /hello on the same loop for 179 ms.
#include <memory>
#include <optional>
#include <utility>

#include "app/app_impl.hpp"
#include "app/request/request_access.hpp"
#include "app/request/response_access.hpp"
#include "app/server_options.hpp"

namespace rivet {

namespace app {

// An answer from its handing to a worker until it is sent from its loop.
struct BodyWorkCall {
    std::optional<Request> request;  // detached, without its body: for the access log
    std::optional<Response> response;
    std::shared_ptr<const detail::BodyWork> work;
    Operations::Trace trace;
    engine::Deferred later;
    unsigned loop = 0;
    WorkerPool::Ticket ticket = WorkerPool::kRefused;  // read on the loop only
};

}  // namespace app

namespace {

// Ahead of the handlers waiting for a worker: the answer is made, only its bytes are not, and a
// connection's later answers wait behind it.
constexpr Priority kBodyWorkPriority = Priority::High;

std::shared_ptr<app::BodyWorkCall> make_call(const Request& req, Response& res,
                                             const app::Operations::Trace& trace, unsigned loop) {
    auto call = std::make_shared<app::BodyWorkCall>();
    call->request.emplace(app::RequestAccess::detach_head(req));
    call->work = detail::ResponseAccess::take_body_work(res);
    call->response.emplace(std::move(res));
    call->trace = trace;
    call->loop = loop;
    return call;
}

}  // namespace

void App::Impl::respond(engine::Exchange& ex, const Request& req, Response& res,
                        const Trace& trace) {
    if (!detail::ResponseAccess::has_body_work(res)) return ex.respond(app::view_of(res));
    auto call = make_call(req, res, trace, ex.loop_index());
    ops->resolve_client(ex, call->trace);  // the last moment the connection is at hand
    call->later = ex.defer();
    work_on_body(std::move(call));
}

void App::Impl::send_later(app::AsyncCall& c) {
    if (detail::ResponseAccess::has_body_work(*c.response)) {
        auto call = make_call(*c.request, *c.response, c.trace, c.loop);
        call->later = std::move(c.later);
        return work_on_body(std::move(call));
    }
    ops->finish_offloaded(*c.request, c.trace, *c.response);
    c.later.complete(app::reply_of(std::move(*c.response)));
}

void App::Impl::work_on_body(std::shared_ptr<app::BodyWorkCall> call) {
    // A client that leaves while the work waits for a worker takes it out of the queue; once a
    // worker has it, it runs to its end and the answer goes nowhere. Weak: the call owns the
    // Deferred.
    call->later.on_cancel([this, weak = std::weak_ptr<app::BodyWorkCall>(call)] {
        if (auto c = weak.lock())
            pool->withdraw(std::exchange(c->ticket, app::WorkerPool::kRefused));
    });
    auto job = [this, call] {
        try {
            call->work->run(*call->response);
        } catch (...) {
            // The work is optional: the body goes as the after()s left it, as when the queue
            // is full (a compressor that failed half-way left the response as it was).
        }
        server->post(call->loop, [this, call] { send_worked(*call); });
    };
    call->ticket = pool->try_submit(std::move(job), kBodyWorkPriority);
    if (call->ticket == app::WorkerPool::kRefused) send_worked(*call);  // as it is, at once
}

void App::Impl::send_worked(app::BodyWorkCall& c) {
    ops->finish_offloaded(*c.request, c.trace, *c.response);
    c.later.complete(app::reply_of(std::move(*c.response)));
}

}  // namespace rivet
