// What the framework reads of a Request beyond its public API.
#pragma once

#include <rivet/request.hpp>

#include "engine/exchange.hpp"

namespace rivet::app {

struct RequestAccess {
    // The TLS facts of the request's connection, or of the copy a detached request keeps (its
    // connection may be gone): for the access log of answers made later.
    static engine::TlsFacts tls(const Request& req);
    // The head and buffered body a request shows (a detached one's own copies).
    static const http::RequestHead& head(const Request& req) { return *req.head_; }
    static std::string_view body(const Request& req) { return req.body_; }
    // A detached copy without the body (an empty one): what the access log of an answer sent
    // later needs, without copying a body the handler is done with.
    static Request detach_head(const Request& req) { return req.detach_copy(false); }
};

}  // namespace rivet::app
