// The engine's contract with the application above it: for each request the engine calls
// Application::serve with an Exchange, and the application answers it now (respond) or later,
// from any thread (defer, then Deferred::complete). Responses leave in request order either way.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>

#include "http/request_parser.hpp"
#include "http/response.hpp"

namespace rivet::engine {

class Connection;
class IoThread;

// The right to answer one request later. Move-only; thread-safe to complete from anywhere.
// Dropped without complete(), it answers 500 so that the connection never waits forever.
class Deferred {
public:
    Deferred() = default;
    Deferred(Deferred&& other) noexcept { *this = std::move(other); }
    Deferred& operator=(Deferred&& other) noexcept;
    Deferred(const Deferred&) = delete;
    Deferred& operator=(const Deferred&) = delete;
    ~Deferred();

    void complete(http::Response&& response);
    bool valid() const { return thread_ != nullptr; }

private:
    friend class Connection;
    IoThread* thread_ = nullptr;
    int fd_ = -1;
    uint64_t connection_id_ = 0;
    uint64_t sequence_ = 0;
};

class Exchange {
public:
    Exchange(Connection& connection, const http::RequestHead& head, std::string_view body)
        : connection_(connection), head_(head), body_(body) {}

    const http::RequestHead& head() const { return head_; }
    std::string_view body() const { return body_; }
    std::string peer_address() const;
    unsigned loop_index() const;

    void respond(const http::Response& response);
    // A protocol-level answer (404, 405, 503 ...) with a plain-text body and optional extra
    // fields ("Allow: GET\r\n").
    void respond_simple(int status, std::string_view body, std::string_view extra_fields = {});
    Deferred defer();

    bool answered() const { return answered_; }

private:
    Connection& connection_;
    const http::RequestHead& head_;
    std::string_view body_;
    bool answered_ = false;
};

class Application {
public:
    virtual ~Application() = default;
    // Called on an I/O loop thread; must not block. An exception escaping it answers 500.
    virtual void serve(Exchange& exchange) = 0;
};

}  // namespace rivet::engine
