// How the App runs handlers whose answer comes later (coroutines, AsyncReply, offloaded ones;
// async/async_call.hpp) and answers them: the same error answers and middleware after() as every
// handler, on the request's loop, then the Exchange (a coroutine that never waited) or the
// Deferred.
#include <exception>
#include <memory>
#include <string>
#include <utility>

#include "app/app_impl.hpp"
#include "app/server_options.hpp"

namespace rivet {

bool App::Impl::run_waiting(const RouteEntry& route, engine::Exchange& ex, Call& call,
                            Trace& trace) {
    if (route.coroutine) {
        app::run_coroutine(route.coroutine, ex, std::move(call.req), std::move(call.res),
                           call.slice, call.kept_fields, trace, *this);
    } else {
        app::run_async_reply(route.async_reply, ex, call.req, std::move(call.res), call.slice,
                             call.kept_fields, trace, *this, loops->at(ex.loop_index()));
    }
    return false;  // answered already, or later: route_request has nothing left to do
}

namespace {

// An offloaded request, from its handing to a worker until its answer is sent from the loop.
struct OffloadedCall : app::AsyncCall {
    const Handler* handler = nullptr;
    app::WorkerPool::Ticket ticket = app::WorkerPool::kRefused;  // read on the loop only
};

}  // namespace

void App::Impl::run_offloaded(const RouteEntry& route, engine::Exchange& ex, Call& call,
                              Trace& trace) {
    auto job = std::make_shared<OffloadedCall>();  // the request's one allocation of its own
    job->request.emplace(call.req.detach());       // the worker reads its own copy
    job->response.emplace(std::move(call.res));
    job->slice = &call.slice;
    job->keep_slice();
    job->kept_fields = call.kept_fields;
    job->trace = trace;
    job->loop = ex.loop_index();
    job->handler = &route.handler;
    waiting(*job, ex);
    job->later = ex.defer();
    // A job whose client went away while it waits in the queue is dropped there. One a worker
    // has started still runs and is answered (after(), the log) on the loop; only the
    // Deferred's complete() then finds nobody to send to. Weak: the job owns the Deferred.
    job->later.on_cancel([this, weak = std::weak_ptr<OffloadedCall>(job)] {
        auto call = weak.lock();
        if (call && pool->withdraw(std::exchange(call->ticket, app::WorkerPool::kRefused)))
            cancelled(*call);
    });
    auto work = [this, job] {
        try {
            (*job->handler)(*job->request, *job->response);
        } catch (...) {  // answered on the loop, where the error handler and after() run
            job->error = std::current_exception();
        }
        server->post(job->loop, [this, job] { answer(*job, nullptr); });
    };
    job->ticket = pool->try_submit(std::move(work), route.priority);
    if (job->ticket != app::WorkerPool::kRefused) return;
    ops->count_pool_rejected();
    Call busy{*job->request, *job->response, *job->slice, job->kept_fields};
    error(busy, 503, "Service Unavailable: the worker pool's queue is full");
    job->response->header("Retry-After", std::to_string(options.retry_after_s));
    answer(*job, nullptr);  // at once, still inside serve()
}

void App::Impl::answer(app::AsyncCall& c, engine::Exchange* now) {
    Call done{*c.request, *c.response, *c.slice, c.kept_fields};
    if (c.error) {
        std::exception_ptr error = std::exchange(c.error, nullptr);
        try {
            std::rethrow_exception(error);
        } catch (...) {
            answer_exception(done, c.loop, true);
        }
    }
    finish_middleware(done, c.loop);
    if (now) return respond(*now, *c.request, *c.response, c.trace);  // serve() logs it
    send_later(c);
}

void App::Impl::waiting(app::AsyncCall& c, engine::Exchange& ex) {
    ops->resolve_client(ex, c.trace);
}

void App::Impl::cancelled(app::AsyncCall& c) {
    ops->count_handler_cancelled(c.loop);
}

}  // namespace rivet
