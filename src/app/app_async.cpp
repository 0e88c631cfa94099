// How the App runs handlers that wait (coroutines, AsyncReply; async/async_call.hpp) and answers
// them: the same error answers and middleware after() as every handler, on the request's loop,
// then the Exchange (a coroutine that never waited) or the Deferred.
#include <exception>
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
    if (now) return now->respond(app::view_of(*c.response));  // serve() logs it, as any
    ops->finish_offloaded(*c.request, c.trace, *c.response);
    c.later.complete(app::reply_of(std::move(*c.response)));
}

void App::Impl::waiting(app::AsyncCall& c, engine::Exchange& ex) {
    ops->resolve_client(ex, c.trace);
}

void App::Impl::cancelled(app::AsyncCall& c) {
    ops->count_handler_cancelled(c.loop);
}

}  // namespace rivet
