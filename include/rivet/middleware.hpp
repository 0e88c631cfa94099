// rivet::Middleware: code that runs around every handler, on the request's I/O loop.
//
//   app.use(rivet::cors({.allow_origins = {"https://app.example"}}));   // every request
//   app.use("/todos", rivet::before([](rivet::Request& req, rivet::Response& res) {
//       if (req.header("Authorization") != "Bearer secret")
//           throw rivet::HttpError(401, "missing or wrong token");
//       req.context().set(User{"ada"});
//       return true;                                                    // go on to the handler
//   }));
//
// Order: before() of the app-wide middleware in the order they were added, then of the groups
// whose prefix the path is under (a prefix "/todos" covers "/todos" and "/todos/..."), then
// routing and the handler (offloaded ones too: before() runs first on the loop, so a refused
// request never takes a worker), then after() of the same middleware in reverse order.
//
// after() sees every response: a handler's, an early answer of a before(), an HttpError, and the
// ones the framework makes itself (404, 405, 413, 431, 500, 503 ...). For a request refused
// before routing (a malformed or too large request), after() runs without before() having run
// (refused() runs instead): a middleware must not assume its before() saw the request.
//
// Waiting middleware. One whose work must wait on the network (a session kept in Redis) returns
// true from waits(): the framework then awaits its before_waiting() and after_waiting() in place
// of before() and after(), on the request's loop, which serves other requests meanwhile (the
// request is copied, as a coroutine handler's is, when one first suspends). Such a request runs
// as a coroutine from its first middleware to its last after(); the handler, whatever its kind,
// runs in between (an offloaded one on the worker pool, awaited). AsyncReply handlers cannot run
// behind a waiting middleware: such a request is answered 500 (use a coroutine handler).
#pragma once

#include <functional>
#include <memory>

#include <rivet/request.hpp>
#include <rivet/response.hpp>
#include <rivet/task.hpp>

namespace rivet {

class Middleware {
public:
    virtual ~Middleware() = default;

    // Before routing. Return true to go on; return false when `res` is the answer (the handler
    // and the middleware after this one do not run; the after() of this one and of those before
    // it do). Throwing an HttpError answers it.
    virtual bool before(Request& req, Response& res) {
        (void)req;
        (void)res;
        return true;
    }

    // Once the response is known, before it is sent. May change anything in it.
    virtual void after(const Request& req, Response& res) {
        (void)req;
        (void)res;
    }

    // A request refused before routing (malformed, too large, rate limited) gets this call in
    // place of before(), ahead of the error handler: what the error body should carry goes into
    // the context here (request_id() puts its id). The refusal stands whatever this does.
    virtual void refused(Request& req) { (void)req; }

    // True: this middleware waits (see above); asked once, when it is added.
    virtual bool waits() const { return false; }
    // What before() and after() are for a middleware that waits; throwing works as it does there.
    virtual Task<bool> before_waiting(Request& req, Response& res) { co_return before(req, res); }
    virtual Task<> after_waiting(const Request& req, Response& res) {
        after(req, res);
        co_return;
    }
};

// Middleware from a function, for the common one-sided cases.
std::shared_ptr<Middleware> before(std::function<bool(Request&, Response&)> fn);
std::shared_ptr<Middleware> after(std::function<void(const Request&, Response&)> fn);

}  // namespace rivet
