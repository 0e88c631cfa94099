// rivet::HttpClient over client::Transfer: the public options and request converted, the
// coroutine resumed from its loop with the outcome, and the Transfer destroyed (its connection
// closed) when the waiting coroutine is.
#include <rivet/http_client.hpp>

#include <stdexcept>

#include "app/async/loop_services.hpp"
#include "app/client/client_call.hpp"
#include "client/transfer.hpp"
#include "http/request_parser.hpp"
#include "net/loop.hpp"

namespace rivet {

namespace app {

namespace {

client::Options convert(const HttpClientOptions& o) {
    client::Options c;
    const auto ms = [](std::chrono::milliseconds d) {
        return d.count() > 0 ? uint64_t(d.count()) : 0;
    };
    c.connect_timeout_ms = ms(o.connect_timeout);
    c.total_timeout_ms = ms(o.timeout);
    c.max_response_bytes = o.max_response_bytes;
    c.max_header_bytes = o.max_header_bytes;
    c.max_redirects = o.max_redirects;
    c.verify_peer = o.verify_peer;
    c.ca_file = o.ca_file;
    return c;
}

HttpClientError::Kind convert(client::ErrorKind k) {
    using K = HttpClientError::Kind;
    switch (k) {
        case client::ErrorKind::InvalidUrl:
            return K::InvalidUrl;
        case client::ErrorKind::InvalidRequest:
            return K::InvalidRequest;
        case client::ErrorKind::Dns:
            return K::Dns;
        case client::ErrorKind::Connect:
            return K::Connect;
        case client::ErrorKind::ConnectTimeout:
            return K::ConnectTimeout;
        case client::ErrorKind::Timeout:
            return K::Timeout;
        case client::ErrorKind::Tls:
            return K::Tls;
        case client::ErrorKind::TooLarge:
            return K::TooLarge;
        case client::ErrorKind::Malformed:
            return K::Malformed;
        case client::ErrorKind::Closed:
            return K::Closed;
        case client::ErrorKind::TooManyRedirects:
            return K::TooManyRedirects;
    }
    return K::Malformed;
}

}  // namespace

std::optional<client::Request> client_request(ClientRequest&& request,
                                              const HttpClientOptions& defaults,
                                              std::exception_ptr& error) {
    client::Request r;
    r.method = std::move(request.method);
    r.headers = std::move(request.headers);
    r.body = std::move(request.body);
    r.options = convert(request.options ? *request.options : defaults);
    std::string why;
    auto url = client::parse_url(request.url, &why);
    if (!url) {
        error = std::make_exception_ptr(
            HttpClientError(HttpClientError::Kind::InvalidUrl, why + ": " + request.url));
        return std::nullopt;
    }
    r.url = std::move(*url);
    return r;
}

std::exception_ptr client_error(const client::Error& e) {
    return std::make_exception_ptr(HttpClientError(convert(e.kind), e.message));
}

net::Loop& client_loop() {
    EventLoop* loop = EventLoop::current();
    if (!loop) throw std::logic_error("rivet::HttpClient: awaited off an I/O loop");
    return *detail::LoopAccess::services(*loop).loop;
}

}  // namespace app

namespace detail {

namespace {

ClientResponse convert(client::Response&& in) {
    ClientResponse out;
    out.status = in.status;
    out.reason = std::move(in.reason);
    out.headers = std::move(in.headers);
    out.body = std::move(in.body);
    out.url = std::move(in.url);
    out.reused_connection = in.reused;
    return out;
}

}  // namespace

void start_client_call(Completion<ClientResponse> c, ClientRequest&& request,
                       const HttpClientOptions& defaults) {
    net::Loop& loop = app::client_loop();
    std::exception_ptr error;
    auto r = app::client_request(std::move(request), defaults, error);
    if (!r) return c.fail(error);
    // The Transfer lives as long as the waiter's on_cancel function holds it: until the
    // coroutine resumes (done or failed: the function is dropped then) or is cancelled (the
    // function destroys it, closing an unfinished exchange's connection).
    auto holder = std::make_shared<std::unique_ptr<client::Transfer>>();
    *holder = client::Transfer::start(loop, std::move(*r), [c](client::Outcome o) {
        if (o.error)
            c.fail(app::client_error(*o.error));
        else
            c.done(convert(std::move(*o.response)));
    });
    c.on_cancel([holder] { holder->reset(); });
}

}  // namespace detail

std::optional<std::string_view> ClientResponse::header(std::string_view name) const {
    for (const auto& [n, v] : headers)
        if (http::iequals(n, name)) return std::string_view(v);
    return std::nullopt;
}

HttpClient::PoolStats HttpClient::pool_stats() {
    const client::PoolStats s = client::pool_stats();
    return {s.opened, s.reused, s.idle};
}

const char* to_string(HttpClientError::Kind kind) {
    using K = HttpClientError::Kind;
    switch (kind) {
        case K::InvalidUrl:
            return "invalid_url";
        case K::InvalidRequest:
            return "invalid_request";
        case K::Dns:
            return "dns";
        case K::Connect:
            return "connect";
        case K::ConnectTimeout:
            return "connect_timeout";
        case K::Timeout:
            return "timeout";
        case K::Tls:
            return "tls";
        case K::TooLarge:
            return "too_large";
        case K::Malformed:
            return "malformed";
        case K::Closed:
            return "closed";
        case K::TooManyRedirects:
            return "too_many_redirects";
    }
    return "unknown";
}

}  // namespace rivet
