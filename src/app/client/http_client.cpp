// rivet::HttpClient over client::Transfer: the public options and request converted, the
// coroutine resumed from its loop with the outcome, and the Transfer destroyed (its connection
// closed) when the waiting coroutine is.
#include <rivet/http_client.hpp>

#include "app/async/loop_services.hpp"
#include "client/transfer.hpp"
#include "http/request_parser.hpp"
#include "net/loop.hpp"

namespace rivet {

namespace detail {

struct ClientCall {
    net::Loop* loop = nullptr;
    std::coroutine_handle<> waiter;
    std::unique_ptr<client::Transfer> transfer;
    std::optional<client::Outcome> outcome;
    bool abandoned = false;
};

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

std::shared_ptr<ClientCall> start_client_call(EventLoop& loop, ClientRequest&& request,
                                              const HttpClientOptions& defaults,
                                              std::coroutine_handle<> h) {
    auto call = std::make_shared<ClientCall>();
    call->loop = LoopAccess::services(loop).loop;
    call->waiter = h;
    client::Request r;
    r.method = std::move(request.method);
    r.headers = std::move(request.headers);
    r.body = std::move(request.body);
    r.options = convert(request.options ? *request.options : defaults);
    std::string why;
    auto url = client::parse_url(request.url, &why);
    if (!url) {
        // Resumed from the loop like every other outcome, never inside await_suspend.
        call->outcome = client::Outcome{
            {}, client::Error{client::ErrorKind::InvalidUrl, why + ": " + request.url}};
        call->loop->post([call] {
            if (!call->abandoned) call->waiter.resume();
        });
        return call;
    }
    r.url = std::move(*url);
    std::weak_ptr<ClientCall> weak = call;
    call->transfer = client::Transfer::start(*call->loop, std::move(r), [weak](client::Outcome o) {
        auto c = weak.lock();
        if (!c || c->abandoned) return;
        c->outcome = std::move(o);
        // Posted: the Transfer is still on the stack here, and the waiter may destroy it.
        c->loop->post([c] {
            if (!c->abandoned) c->waiter.resume();
        });
    });
    return call;
}

void abandon_client_call(ClientCall& call) noexcept {
    call.abandoned = true;
    call.transfer.reset();  // closes an unfinished exchange's connection
}

ClientResponse client_call_result(ClientCall& call) {
    call.transfer.reset();
    client::Outcome& o = *call.outcome;
    if (o.error) throw HttpClientError(convert(o.error->kind), o.error->message);
    client::Response& in = *o.response;
    ClientResponse out;
    out.status = in.status;
    out.reason = std::move(in.reason);
    out.headers = std::move(in.headers);
    out.body = std::move(in.body);
    out.url = std::move(in.url);
    out.reused_connection = in.reused;
    return out;
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
