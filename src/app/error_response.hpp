// Error responses: the framework's own (404, 405, 500, 503 ...) and thrown HttpErrors become a
// Response that keeps what middleware put in it, with a body the app's error handler shapes.
#pragma once

#include <rivet/app.hpp>

#include <cstddef>
#include <string_view>

namespace rivet::app {

// {"error": "Not Found"}: the status is on the status line
void default_error_body(const Request& req, Response& res, const ErrorInfo& error);

// The status's reason phrase ("Not Found"): the message of the framework's own errors.
std::string_view reason_of(int status);

// Makes `res` the error response: status `status`, the first `keep` header fields of `res` kept
// (those middleware set before the handler ran) and the rest dropped with the body, then the body
// written by `shape`. An error handler that throws falls back to the default body.
void make_error(Response& res, size_t keep, int status, std::string_view message,
                const ErrorHandler& shape, const Request& req);

}  // namespace rivet::app
