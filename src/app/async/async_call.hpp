// Handlers that answer later without holding their I/O loop: coroutines (rivet::Task<>), the
// callback form (rivet::AsyncReply) and offloaded handlers (run on the worker pool; App::Impl's
// run_offloaded). All end the same way: App's AsyncAnswers turns the handler's Response (or
// exception) into the answer, at once when the handler never waited, else through the request's
// Deferred. Coroutines and AsyncReply are cancelled when the connection goes first; an
// offloaded handler runs to its end and its answer goes nowhere.
#pragma once

#include <exception>
#include <functional>
#include <optional>

#include <rivet/async_reply.hpp>
#include <rivet/event_loop.hpp>
#include <rivet/request.hpp>
#include <rivet/response.hpp>
#include <rivet/task.hpp>

#include "app/middleware/middleware_chain.hpp"
#include "app/operations/operations.hpp"
#include "app/routing/router.hpp"
#include "engine/exchange.hpp"

namespace rivet::app {

using CoroutineHandler = std::function<Task<>(Request&, Response&)>;
using AsyncReplyHandler = std::function<void(Request&, AsyncReply)>;

// What a handler whose answer comes later keeps while it runs or waits.
struct AsyncCall {
    std::optional<Request> request;    // detached (owns its bytes) once the handler waits
    std::optional<Response> response;  // middleware's before() may have set fields already
    // The request's middleware: the caller's slice while it runs, a copy once it waits.
    MiddlewareChain::Slice* slice = nullptr;
    MiddlewareChain::Slice own_slice;
    size_t kept_fields = 0;  // fields of `response` set before the handler (App::Impl::Call)
    Operations::Trace trace;
    engine::Deferred later;    // the answer's place, taken when the handler first waits
    std::exception_ptr error;  // what the handler threw, if it did
    unsigned loop = 0;

    void keep_slice() {
        if (slice == &own_slice) return;
        own_slice = *slice;
        slice = &own_slice;
    }
};

// App's part, on the request's loop: the answer of a finished handler (`now`: still inside
// dispatch, answer through it; null: answer through call.later), and a cancelled one's count.
class AsyncAnswers {
public:
    virtual void answer(AsyncCall& call, engine::Exchange* now) = 0;
    virtual void cancelled(AsyncCall& call) = 0;
    // The handler waits: the last moment the connection is at hand (the access log's client).
    virtual void waiting(AsyncCall& call, engine::Exchange& ex) = 0;

protected:
    ~AsyncAnswers() = default;
};

// Runs a coroutine handler on this loop. A handler that ends without waiting is answered
// before this returns, with no allocation beyond its frame (call objects and frames are recycled
// per thread); one that waits answers through a Deferred, or is destroyed when its client goes.
// `req` and `res` (after before()) move into the call, whose place the handler's references
// then name for its whole run.
void run_coroutine(const CoroutineHandler& handler, engine::Exchange& ex, Request&& req,
                   Response&& res, MiddlewareChain::Slice& slice, size_t kept_fields,
                   const Operations::Trace& trace, AsyncAnswers& answers);

// Runs a callback-form handler: it gets a detached request and an AsyncReply to send from
// any thread; the answer always comes through a Deferred. Fields that before() set on `res`
// are added to the response sent.
void run_async_reply(const AsyncReplyHandler& handler, engine::Exchange& ex, const Request& req,
                     Response&& res, MiddlewareChain::Slice& slice, size_t kept_fields,
                     const Operations::Trace& trace, AsyncAnswers& answers, EventLoop& loop);

}  // namespace rivet::app
