// rivet::Request: what a handler sees of a request. Strings are views: into the connection's
// buffer for inline handlers (valid until the handler returns), into the request's own copy for
// offloaded ones (valid for the Request's lifetime).
#pragma once

#include <charconv>
#include <cstddef>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <type_traits>
#include <utility>
#include <vector>

#include <nlohmann/json.hpp>

#include <rivet/body_stream.hpp>
#include <rivet/context.hpp>
#include <rivet/header_fields.hpp>
#include <rivet/method.hpp>

namespace rivet {

// What the framework builds a Request from; opaque to users, so the public headers stand alone.
namespace http {
struct RequestHead;
}
namespace app {
struct RouteParams;
struct RequestAccess;
}  // namespace app
class Request;
namespace detail {
void attach_body_stream(Request& req, std::shared_ptr<BodyStreamState> stream);
}
namespace engine {
class Exchange;
}

// What Request::json() parses. A document's tree costs many times its bytes (a value per
// number, a heap block per array or object) and a level of nesting costs a level of recursion,
// so both are bounded before parsing starts.
struct JsonLimits {
    size_t max_bytes = 1024 * 1024;  // a larger body: HttpError(413)
    size_t max_depth = 128;          // arrays and objects nested deeper: HttpError(400)
};

class Request {
public:
    // Made by the framework for each request (handlers receive one; they do not make them).
    Request(const http::RequestHead& head, std::string_view body, const app::RouteParams& params,
            const engine::Exchange* exchange = nullptr);

    Method method() const;
    std::string_view method_name() const;  // as sent, e.g. "GET"
    std::string_view target() const;       // as sent
    std::string_view path() const;         // without the query
    std::string_view query_string() const;
    // The protocol's version, HTTP/<major>.<minor>: 1.0 or 1.1, or 2.0 for a request that came
    // as an HTTP/2 stream (RunOptions::http2).
    int version_major() const;
    int version_minor() const;
    std::string_view body() const { return body_; }
    const std::string& peer_address() const;  // "127.0.0.1", "::1"; "" when unknown
    // The I/O loop serving the request (0 .. threads-1), for per-loop state that needs no
    // lock; kNoLoop for a detached (offloaded) request.
    static constexpr unsigned kNoLoop = ~0u;
    unsigned loop_index() const;
    // Whether the request came over TLS (the HTTPS listener, RunOptions::tls): for redirects,
    // cookies' Secure attribute. Kept by detach().
    bool secure() const;
    // The host name the client asked for in its TLS handshake (SNI), e.g. for per-host routing;
    // empty over plain HTTP or when the client sent none. Kept by detach().
    std::string_view tls_server_name() const;

    // Header fields, case-insensitive; first match, or "" when absent.
    std::string_view header(std::string_view name) const;
    bool has_header(std::string_view name) const;
    HeaderFields headers() const;
    // The value of the cookie `name` (case-sensitive) from the Cookie fields, however many the
    // client sent (an HTTP/2 request's split ones arrive joined), DQUOTEs stripped; nullopt
    // when absent. A view into the request, found when asked (nothing is parsed for requests
    // that never ask).
    std::optional<std::string_view> cookie(std::string_view name) const;

    // Route parameters (":id" and "*rest" of the matched pattern), "" when absent.
    std::string_view param(std::string_view name) const;
    // The parameter as an integer of type T (decimal, '-' only for signed types, no '+' or
    // spaces); nullopt when absent, not a number, or out of T's range.
    template <class T>
    std::optional<T> param_as(std::string_view name) const {
        static_assert(std::is_integral_v<T> && !std::is_same_v<T, bool>, "an integer type");
        const std::string_view v = param(name);
        T out{};
        auto [end, ec] = std::from_chars(v.data(), v.data() + v.size(), out);
        if (v.empty() || ec != std::errc() || end != v.data() + v.size()) return std::nullopt;
        return out;
    }

    // Decoded query parameters ("+" is a space); the first value of a repeated key.
    std::optional<std::string> query(std::string_view key) const;
    const std::vector<std::pair<std::string, std::string>>& query_params() const;

    // The body parsed as JSON within `limits`; throws HttpError(400) saying where it is
    // malformed (a number too large for a double is malformed), HttpError(413) when it is larger
    // than limits.max_bytes. Parsing is linear in the body: an offloaded route is the place for
    // large documents.
    nlohmann::json json(const JsonLimits& limits = {}) const;

    // Typed values set by middleware for the handler (rivet/context.hpp); shared with the
    // detached copy an offloaded or waiting handler gets.
    Context& context() const;

    // A copy that owns its bytes, for work that outlives the connection's buffer (offload).
    Request detach() const;

    // The body as a stream (rivet/body_stream.hpp): on a route marked `.stream_body()` pieces
    // as they arrive (body() is empty there); elsewhere the buffered body as one piece. The
    // stream must not outlive this Request.
    BodyStream body_stream() const;

private:
    struct Owned;
    Request detach_copy(bool with_body) const;  // detach(); without the body for the access log
    // Pointers, not copies: a Request is built for every request, so it stays a few words big.
    // A detached Request points into its own Owned copy.
    const http::RequestHead* head_;
    std::string_view body_;
    const app::RouteParams* params_;
    const engine::Exchange* exchange_;  // formats the peer address on demand; null when detached
    mutable std::string peer_;
    std::shared_ptr<Owned> owned_;  // set on detached copies
    mutable std::shared_ptr<std::vector<std::pair<std::string, std::string>>> query_;
    mutable std::shared_ptr<Context> context_;         // made on first use
    std::shared_ptr<detail::BodyStreamState> stream_;  // a streamed body's; shared when detached
    friend void detail::attach_body_stream(Request&, std::shared_ptr<detail::BodyStreamState>);
    friend struct app::RequestAccess;  // the access log reads a detached copy's TLS facts
};

}  // namespace rivet
