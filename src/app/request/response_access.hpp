// What the framework reads and sets of a Response beyond its public API: the session a 101
// hands its connection to (App::ws), and work an after() leaves on the body for a worker.
#pragma once

#include <rivet/response.hpp>

#include <functional>
#include <memory>
#include <utility>

#include "engine/reply.hpp"

namespace rivet::detail {

struct ResponseUpgrade {
    engine::SessionFactory make;
};

// Work on a response's body too heavy for the I/O loop (rivet::compression() of a large body),
// left by an after() and done on the worker pool once every after() has run, before the answer
// is sent (App::Impl::respond, app_body_work.cpp). Optional by contract: where it cannot run
// (the pool's queue is full, or the answer cannot wait: a refusal before routing) the response
// is sent as the after()s left it, so the work must leave a response that is right either way,
// and check when it runs that the body is still one it applies to (later after()s may have
// changed it). It runs on a worker thread, with the Response its only shared state.
struct BodyWork {
    std::function<void(Response&)> run;
};

struct ResponseAccess {
    // Makes `res` the 101 that hands its connection to `upgrade`'s session.
    static void upgrade(Response& res, std::shared_ptr<const ResponseUpgrade> upgrade) {
        res.status_ = 101;
        res.upgrade_ = std::move(upgrade);
    }
    static const ResponseUpgrade* upgrade_of(const Response& res) {
        return res.status_ == 101 ? res.upgrade_.get() : nullptr;
    }

    // A field the framework made itself, of a name it knows is a token and none of those that
    // header() keeps apart (Content-Type, Connection, the framing), and a value it built or
    // checked before (a static file's ETag, a Cache-Control checked at start-up): appended
    // without the checks header() runs on what a handler passes, which were a third of the
    // instructions of a static file's answer.
    static void add_field(Response& res, std::string_view name, std::string_view value) {
        res.append_field(name, value);
    }

    // Response::body(shared, type) for a type that is already a literal (interned when the
    // static file entered its cache): without the check and the interning lookup that body()
    // runs on a handler's type on every response.
    static void share_body(Response& res, std::shared_ptr<const std::string> body,
                           std::string_view literal_type) {
        res.body_.clear();
        res.shared_body_ = std::move(body);
        res.set_static_type(literal_type);
    }

    // Whether the Content-Type is a view of a literal (text(), json(), an interned type): it
    // lives as long as the process, so its address names it (app::CompressibleTypes).
    static bool type_is_literal(const Response& res) {
        return res.own_type_.empty() && !res.static_type_.empty();
    }

    // The fields as the lines an HTTP/1 head carries ("Name: value\r\n" each).
    static std::string_view field_lines(const Response& res) { return res.headers_.lines(); }

    static void leave_body_work(Response& res, std::function<void(Response&)> run) {
        res.body_work_ = std::make_shared<const BodyWork>(BodyWork{std::move(run)});
    }
    static bool has_body_work(const Response& res) { return res.body_work_ != nullptr; }
    // Takes the work off `res` (null when none), so that it runs at most once.
    static std::shared_ptr<const BodyWork> take_body_work(Response& res) {
        return std::move(res.body_work_);
    }
};

}  // namespace rivet::detail
