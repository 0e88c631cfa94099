// Handlers that answer later without holding their I/O loop: coroutines (rivet::Task<>) and the
// callback form (rivet::AsyncReply). Both end the same way: App's AsyncAnswers turns the
// handler's Response (or exception) into the answer, at once when the handler never waited,
// else through the request's Deferred; and both are cancelled when the connection goes first.
#pragma once

#include <exception>
#include <functional>
#include <optional>

#include <rivet/async_reply.hpp>
#include <rivet/event_loop.hpp>
#include <rivet/request.hpp>
#include <rivet/response.hpp>
#include <rivet/task.hpp>

#include "app/operations.hpp"
#include "app/router.hpp"
#include "engine/exchange.hpp"

namespace rivet::app {

using CoroutineHandler = std::function<Task<>(Request&, Response&)>;
using AsyncReplyHandler = std::function<void(Request&, AsyncReply)>;

// What an asynchronous handler's run keeps while it waits.
struct AsyncCall {
    std::optional<Request> request;    // detached (owns its bytes) once the handler waits
    std::optional<Response> response;  // made with the request, gone when it is answered
    Operations::Trace trace;
    engine::Deferred later;    // the answer's place, taken when the handler first waits
    std::exception_ptr error;  // what the handler threw, if it did
    unsigned loop = 0;
};

// App's part, on the request's loop: the answer of a finished handler (`now`: still inside
// dispatch, answer through it; null: answer through call.later), and a cancelled one's count.
class AsyncAnswers {
public:
    virtual void answer(AsyncCall& call, engine::Exchange* now) = 0;
    virtual void cancelled(AsyncCall& call) = 0;

protected:
    ~AsyncAnswers() = default;
};

// Runs a coroutine handler on this loop. A handler that ends without waiting is answered
// before this returns, with no allocation beyond its frame (call objects are recycled per
// thread); one that waits answers through a Deferred, or is destroyed when its client goes.
// The Request is made in place from the route's match: a Request is never moved on this path.
void run_coroutine(const CoroutineHandler& handler, engine::Exchange& ex, const RouteParams& params,
                   const Operations::Trace& trace, AsyncAnswers& answers);

// Runs a callback-form handler: it gets a detached request and an AsyncReply to send from
// any thread; the answer always comes through a Deferred.
void run_async_reply(const AsyncReplyHandler& handler, engine::Exchange& ex, Request&& req,
                     const Operations::Trace& trace, AsyncAnswers& answers, EventLoop& loop);

}  // namespace rivet::app
