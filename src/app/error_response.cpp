#include "app/error_response.hpp"

#include <utility>

#include "http/response_writer.hpp"

namespace rivet::app {

void default_error_body(const Request&, Response& res, const ErrorInfo& error) {
    res.json({{"error", error.message}});
}

std::string_view reason_of(int status) {
    return http::status_reason(status);
}

void make_error(Response& res, size_t keep, int status, std::string_view message,
                const ErrorHandler& shape, const Request& req) {
    Response error(status);
    const ResponseHeaders& fields = res.headers();
    for (size_t i = 0; i < keep && i < fields.size(); ++i)
        error.header(fields[i].name, fields[i].value);
    if (res.close_connection()) error.close_connection(true);
    res = std::move(error);
    ErrorInfo info{status, message};
    try {
        if (shape) return shape(req, res, info);
    } catch (...) {
        // The error handler failed on an error already being answered: the default body still
        // tells the client what happened.
    }
    default_error_body(req, res, info);
}

}  // namespace rivet::app
