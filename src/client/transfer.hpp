// client::Transfer: one HTTP/1.1 request and its response, on one net::Loop, callback-driven as
// the engine is: resolve the host (Resolver), take a kept-alive connection of the origin from the
// loop's Pool or connect a new one (non-blocking, TLS when the URL says https), send, parse the
// head (http::parse_response_head), decode the body (http::BodyDecoder, or until the close),
// and give the connection back to the pool when the response allowed it. Redirects are followed
// only when the options ask. Bounds: connect timeout (resolution and handshake included), total
// timeout, response size (head and body).
//
// Lifetime: the owner destroys the Transfer to abandon it (its connection is closed, never
// pooled: the response may still be arriving); `done` runs once, on the loop, and is the
// Transfer's last act, so it may destroy the Transfer.
#pragma once

#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "client/url.hpp"
#include "net/loop.hpp"

namespace rivet::client {

struct Options {
    uint64_t connect_timeout_ms = 10'000;
    uint64_t total_timeout_ms = 30'000;
    uint64_t max_response_bytes = 8 * 1024 * 1024;  // the body, decoded
    size_t max_header_bytes = 64 * 1024;
    unsigned max_redirects = 0;  // 0: a 3xx is the answer
    bool verify_peer = true;     // https: the certificate chain and the host name
    std::string ca_file;         // https: trust these instead of the system store
};

enum class ErrorKind : uint8_t {
    InvalidUrl,
    InvalidRequest,  // a field name or value that cannot be sent
    Dns,             // the name does not resolve
    Connect,         // refused, unreachable
    ConnectTimeout,  // no connection (and handshake) within connect_timeout_ms
    Timeout,         // no complete response within total_timeout_ms
    Tls,             // handshake failed; certificate not trusted or not for this host
    TooLarge,        // the response crossed max_response_bytes or max_header_bytes
    Malformed,       // not a valid HTTP/1.1 response
    Closed,          // the server closed or reset before the response was complete
    TooManyRedirects,
};

struct Error {
    ErrorKind kind;
    std::string message;
};

using Fields = std::vector<std::pair<std::string, std::string>>;

struct Request {
    std::string method = "GET";
    Url url;
    Fields headers;
    std::string body;
    Options options;
    // Streamed: `done` gets the head (an empty body) as soon as it has arrived, and the body is
    // taken in pieces (take_body) while it arrives; reading pauses while kStreamWindow bytes wait.
    bool stream = false;
};

struct Response {
    int status = 0;
    std::string reason;
    Fields headers;
    std::string body;
    std::string url;      // where it came from (after redirects)
    bool reused = false;  // over a kept-alive connection
};

struct Outcome {
    std::optional<Response> response;
    std::optional<Error> error;
};

struct Conn;

class Transfer {
public:
    using Done = std::function<void(Outcome)>;

    // Starts at once; `done` is never called before start() returns (errors found at once are
    // posted to the loop).
    static std::unique_ptr<Transfer> start(net::Loop& loop, Request request, Done done);
    ~Transfer();

    // A streamed body (after `done` gave the head). On the loop's thread.
    static constexpr size_t kStreamWindow = 256 * 1024;
    enum class BodyState : uint8_t { More, End, Failed };
    BodyState body_state() const;     // End / Failed: once what take_body() gives is taken
    const Error* body_error() const;  // when Failed
    std::string take_body();          // what has arrived (maybe nothing); resumes a paused read
    // Called once (on the loop) when body bytes arrive, the body ends, or it fails; set again
    // for the next time.
    void on_body(std::function<void()> fn);
    Transfer(const Transfer&) = delete;
    Transfer& operator=(const Transfer&) = delete;

private:
    struct Impl;
    explicit Transfer(std::unique_ptr<Impl> impl);
    std::unique_ptr<Impl> impl_;
};

// Per loop thread: connections opened, reused, and idle now (for tests and metrics).
struct PoolStats {
    uint64_t opened = 0;
    uint64_t reused = 0;
    size_t idle = 0;
};
PoolStats pool_stats();

}  // namespace rivet::client
