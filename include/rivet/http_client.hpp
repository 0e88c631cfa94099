// rivet::HttpClient: HTTP/1.1 requests from a coroutine handler, without blocking its loop.
//
//   rivet::HttpClient client;                      // cheap: options only; share it or not
//   auto r = co_await client.get("https://api.example.com/items?id=7");
//   if (r.status == 200) use(r.body);
//   rivet::ClientRequest post{.method = "POST", .url = url,
//                             .headers = {{"Content-Type", "application/json"}}, .body = json};
//   auto p = co_await client.send(std::move(post));  // named: GCC 12 destroys a braced
//                                                     // temporary inside co_await twice
//
// Connections are kept alive and reused per origin (scheme, host, port) per I/O loop; names are
// resolved asynchronously (c-ares); https verifies the server's certificate against the system's
// trust store (or HttpClientOptions::ca_file) and its host name, and sends SNI. The body is
// buffered whole, up to max_response_bytes; chunked and Content-Length bodies and bodies ended by
// the close are read. Redirects are followed only when max_redirects says so.
//
// Failures throw rivet::HttpClientError (kind() says which: DNS, connect, TLS, timeout, too
// large, malformed ...); any HTTP status, 4xx and 5xx included, is a response, not an error.
// Cancellation: when the request whose handler waits is cancelled (its client left), the
// upstream request is abandoned at once and its connection closed, never reused.
// Only from a coroutine on an I/O loop (co_await elsewhere throws std::logic_error). Written
// with rivet::until_complete, so it composes with the toolbox: with_timeout around a request,
// when_all over several (each on its own connection).
#pragma once

#include <chrono>
#include <coroutine>
#include <cstdint>
#include <memory>
#include <optional>
#include <stdexcept>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include <rivet/completion.hpp>
#include <rivet/task.hpp>

namespace rivet {

struct HttpClientOptions {
    std::chrono::milliseconds connect_timeout{10'000};  // resolution, connect and TLS handshake
    std::chrono::milliseconds timeout{30'000};          // the whole request, redirects included
    uint64_t max_response_bytes = 8 * 1024 * 1024;      // the body; past it: TooLarge
    size_t max_header_bytes = 64 * 1024;                // the response head; past it: TooLarge
    unsigned max_redirects = 0;  // 0: a 3xx is returned as it is; n: follow up to n
    bool verify_peer = true;     // https: refuse a certificate not trusted or not for the host
    std::string ca_file{};       // https: trust these certificates (PEM) instead of the system's
};

using ClientFields = std::vector<std::pair<std::string, std::string>>;

struct ClientRequest {
    std::string method = "GET";
    std::string url{};  // http://... or https://...
    ClientFields headers{};
    std::string body{};                          // sent with Content-Length
    std::optional<HttpClientOptions> options{};  // else the client's
};

struct ClientResponse {
    int status = 0;
    std::string reason{};
    ClientFields headers{};
    std::string body{};
    std::string url{};               // where the answer came from (after redirects)
    bool reused_connection = false;  // over a kept-alive connection

    // The first field named `name` (case-insensitive), or nullopt.
    std::optional<std::string_view> header(std::string_view name) const;
};

class HttpClientError : public std::runtime_error {
public:
    enum class Kind {
        InvalidUrl,
        InvalidRequest,
        Dns,
        Connect,
        ConnectTimeout,
        Timeout,
        Tls,
        TooLarge,
        Malformed,
        Closed,
        TooManyRedirects,
    };
    HttpClientError(Kind kind, const std::string& message)
        : std::runtime_error(message), kind_(kind) {}
    Kind kind() const { return kind_; }

private:
    Kind kind_;
};

// "dns", "connect", "tls", "too_large" ...: for logs and JSON.
const char* to_string(HttpClientError::Kind kind);

namespace detail {
struct ClientStreamState;  // src/app/client/client_stream.cpp
}

// A response whose body is read in pieces as it arrives (HttpClient::stream): the head is here
// once it has arrived; read() gives the body. Reading from the upstream pauses while 256 KiB
// wait unread, so a slow reader holds back a fast server rather than filling memory.
// max_response_bytes still bounds the whole body; the total timeout still runs (set
// `timeout` to 0 for none). Destroying the stream before the end abandons the request (the
// connection is closed); one read to the end returns the connection to the pool.
class ClientStream {
public:
    int status = 0;
    std::string reason{};
    ClientFields headers{};
    std::string url{};
    bool reused_connection = false;

    std::optional<std::string_view> header(std::string_view name) const;
    // The next piece of the body (never empty), or nullopt once it has ended; throws
    // HttpClientError (Timeout, TooLarge, Malformed, Closed) when it cannot go on.
    Task<std::optional<std::string>> read();

    ClientStream() = default;
    ClientStream(ClientStream&&) noexcept = default;
    ClientStream& operator=(ClientStream&&) noexcept = default;
    ~ClientStream();

private:
    friend struct detail::ClientStreamState;
    std::shared_ptr<detail::ClientStreamState> state_;
};

namespace detail {

// Out of line (src/app/client/http_client.cpp): starts the request on the current loop; `c`
// gets the response or an HttpClientError; cancelling the waiter abandons the request.
void start_client_call(Completion<ClientResponse> c, ClientRequest&& request,
                       const HttpClientOptions& defaults);

void start_client_stream(Completion<ClientStream> c, ClientRequest&& request,
                         const HttpClientOptions& defaults);
void start_stream_read(Completion<std::optional<std::string>> c,
                       const std::shared_ptr<ClientStreamState>& state);

inline Task<ClientStream> client_stream(ClientRequest request, HttpClientOptions defaults) {
    co_return co_await until_complete<ClientStream>([&](Completion<ClientStream> c) {
        start_client_stream(std::move(c), std::move(request), defaults);
    });
}

inline Task<ClientResponse> client_send(ClientRequest request, HttpClientOptions defaults) {
    co_return co_await until_complete<ClientResponse>([&](Completion<ClientResponse> c) {
        start_client_call(std::move(c), std::move(request), defaults);
    });
}

}  // namespace detail

class HttpClient {
public:
    explicit HttpClient(HttpClientOptions defaults = {}) : defaults_(std::move(defaults)) {}

    // Tasks: co_await them, or combine them (when_all, when_any, with_timeout). Each holds
    // copies of what it needs, the client's options included.
    Task<ClientResponse> get(std::string url, ClientFields headers = {}) const {
        return send(ClientRequest{"GET", std::move(url), std::move(headers), {}, {}});
    }
    Task<ClientResponse> send(ClientRequest request) const {
        return detail::client_send(std::move(request), defaults_);
    }
    // The head as soon as it has arrived, the body read in pieces (ClientStream::read).
    Task<ClientStream> stream(ClientRequest request) const {
        return detail::client_stream(std::move(request), defaults_);
    }
    const HttpClientOptions& options() const { return defaults_; }

    // Connections this thread's loop opened and reused so far, and how many are idle now.
    struct PoolStats {
        uint64_t opened = 0;
        uint64_t reused = 0;
        size_t idle = 0;
    };
    static PoolStats pool_stats();

private:
    HttpClientOptions defaults_;
};

}  // namespace rivet

namespace rivet {

inline Task<std::optional<std::string>> ClientStream::read() {
    auto state = state_;  // the frame's own reference: the stream may move meanwhile
    co_return co_await until_complete<std::optional<std::string>>(
        [&](Completion<std::optional<std::string>> c) {
            detail::start_stream_read(std::move(c), state);
        });
}

}  // namespace rivet
