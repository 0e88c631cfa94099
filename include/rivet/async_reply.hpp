// rivet::AsyncReply: the callback form of a handler that answers later, for code built on
// callbacks (a client library's completion, a message from another thread):
//
//   app.get("/quote", [&](rivet::Request& req, rivet::AsyncReply reply) {
//       prices.fetch(std::string(req.param("sym")), [reply = std::move(reply)](double p) mutable {
//           rivet::Response res;
//           res.json({{"price", p}});
//           reply.send(std::move(res));                       // from any thread, once
//       });
//   });
//
// The request a handler of this form receives owns its bytes and lives as long as the reply
// (reply.request()). Dropped without send(), the reply answers 500. When the client goes away
// first, cancelled() turns true and the on_cancel hook runs on the request's I/O loop; a send()
// after that goes nowhere. The answer leaves in request order, after the app's middleware.
#pragma once

#include <functional>
#include <memory>

#include <rivet/request.hpp>
#include <rivet/response.hpp>

namespace rivet {

namespace detail {
struct ReplyAccess;
}

class AsyncReply {
public:
    AsyncReply(AsyncReply&&) noexcept = default;
    AsyncReply& operator=(AsyncReply&& other) noexcept;
    AsyncReply(const AsyncReply&) = delete;
    AsyncReply& operator=(const AsyncReply&) = delete;
    ~AsyncReply();  // not sent: answers 500

    // Answers the request; from any thread. Once: a second send throws std::logic_error.
    void send(Response res);
    // The client went away (any thread; it may turn true just after it said false).
    bool cancelled() const;
    // `fn` runs on the request's I/O loop if the client goes away before the answer was sent
    // (at once, posted there, if it has gone already). From any thread; replaces an earlier one.
    void on_cancel(std::function<void()> fn);
    const Request& request() const;
    bool sent() const;

    struct State;  // the framework's

private:
    friend struct detail::ReplyAccess;
    explicit AsyncReply(std::shared_ptr<State> state) : state_(std::move(state)) {}
    std::shared_ptr<State> state_;
};

}  // namespace rivet
