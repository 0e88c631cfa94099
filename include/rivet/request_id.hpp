// rivet::request_id(): an id per request, for tracing a request through logs and services.
//
//   app.use(rivet::request_id());
//   ... in a handler: req.context().get<rivet::RequestId>().value
//
// The id is taken from the request's field (a proxy's X-Request-Id) when `trust_incoming` and it
// is well formed (1..128 of [A-Za-z0-9._:-]), made up otherwise (unique in the process, not
// guessable across restarts), stored in the context and sent back in the same field.
#pragma once

#include <memory>
#include <string>

#include <rivet/middleware.hpp>

namespace rivet {

struct RequestId {
    std::string value{};
};

struct RequestIdOptions {
    std::string header = "X-Request-Id";
    bool trust_incoming = true;
};

// Throws std::invalid_argument when `header` is not a valid field name.
std::shared_ptr<Middleware> request_id(RequestIdOptions options = {});

}  // namespace rivet
