// rivet::HttpError: thrown from a handler or middleware, it answers its status and message
// instead of a 500. The app's error handler (App::on_error) shapes the body, JSON by default:
//
//   if (!todo) throw rivet::HttpError(404, "no todo with id " + std::to_string(id));
//   throw rivet::HttpError(401, "missing token").header("WWW-Authenticate", "Bearer");
#pragma once

#include <stdexcept>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace rivet {

class HttpError : public std::runtime_error {
public:
    // `status` must be 400..599 (std::invalid_argument otherwise); `message` is what the client
    // is told, so it must not leak internals.
    HttpError(int status, std::string message);

    int status() const noexcept { return status_; }
    std::string_view message() const noexcept { return what(); }

    // Extra header fields for the error response (WWW-Authenticate, Retry-After, ...).
    HttpError& header(std::string name, std::string value) & {
        headers_.emplace_back(std::move(name), std::move(value));
        return *this;
    }
    HttpError&& header(std::string name, std::string value) && {
        headers_.emplace_back(std::move(name), std::move(value));
        return std::move(*this);
    }
    const std::vector<std::pair<std::string, std::string>>& headers() const { return headers_; }

private:
    int status_;
    std::vector<std::pair<std::string, std::string>> headers_;
};

// What the error handler is told about an error response it shapes.
struct ErrorInfo {
    int status;
    std::string_view message;  // for the client: "Not Found", an HttpError's message, ...
};

}  // namespace rivet
