// The engine's contract with the application above it: for each request the engine calls
// Application::serve with an Exchange, and the application answers it now (respond) or later,
// from any thread (defer, then Deferred::complete). Responses leave in request order either way.
#pragma once

#include <atomic>
#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <string_view>

#include "engine/reply.hpp"
#include "http/request_parser.hpp"

namespace rivet::engine {

class Connection;
class IoThread;

// A peer's address as raw bytes (AF_INET: the first 4), cheaper than peer_address()'s text.
struct PeerIp {
    uint8_t family = 0;  // AF_INET or AF_INET6
    uint8_t bytes[16] = {};
};

// What a Deferred and its connection's slot share: who ended the wait, the answer (complete)
// or the connection (cancel, when it closes first). Decided once, by compare-and-swap, so a
// cancel never follows a completion and an answer completed after a cancel goes nowhere.
struct DeferredState {
    enum Outcome : uint8_t { kWaiting, kCompleted, kCancelled };
    std::atomic<uint8_t> outcome{kWaiting};
    // Set and run on the connection's loop thread only.
    std::function<void()> on_cancel;

    bool settle(Outcome o) {
        uint8_t expected = kWaiting;
        return outcome.compare_exchange_strong(expected, o, std::memory_order_acq_rel);
    }
};

// The right to answer one request later. Move-only; thread-safe to complete from anywhere.
// Dropped without complete(), it answers 500 so that the connection never waits forever.
//
// Cancellation: when the connection closes while this answer is still owed (the client reset,
// sent EOF while waiting, or a timeout or drain cut it off), the callback given to on_cancel()
// runs on the connection's loop thread, once, and only if complete() had not been called; a
// complete() after that does nothing.
class Deferred {
public:
    Deferred() = default;
    Deferred(Deferred&& other) noexcept { *this = std::move(other); }
    Deferred& operator=(Deferred&& other) noexcept;
    Deferred(const Deferred&) = delete;
    Deferred& operator=(const Deferred&) = delete;
    ~Deferred();

    void complete(Reply&& reply);
    bool valid() const { return thread_ != nullptr; }
    // On the connection's loop thread, before the answer can be cancelled (i.e. before control
    // returns to the loop); replaces an earlier callback.
    void on_cancel(std::function<void()> fn);
    // True once the connection gave up on this answer (any thread; a hint: it may change after).
    bool cancelled() const;

private:
    friend class Connection;
    std::shared_ptr<DeferredState> state_;
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
    PeerIp peer_ip() const;
    unsigned loop_index() const;

    void respond(const ReplyView& reply);
    // A protocol-level answer (404, 405, 503 ...) with a plain-text body and optional extra
    // fields ("Allow: GET\r\n").
    void respond_simple(int status, std::string_view body, std::string_view extra_fields = {});
    Deferred defer();

    bool answered() const { return answered_; }
    // What respond/respond_simple answered (0: nothing yet, or deferred), and the body's size.
    int status() const { return status_; }
    uint64_t body_bytes() const { return body_bytes_; }

private:
    Connection& connection_;
    const http::RequestHead& head_;
    std::string_view body_;
    bool answered_ = false;
    int status_ = 0;
    uint64_t body_bytes_ = 0;
};

class Application {
public:
    virtual ~Application() = default;
    // Called on an I/O loop thread; must not block. An exception escaping it answers 500.
    virtual void serve(Exchange& exchange) = 0;
    // A request the parser refused (400, 413, 414, 431, ...): answered and closed by the
    // engine, told here for logs and counters. On the loop's thread; must not block.
    virtual void on_protocol_error(unsigned /*loop*/, const PeerIp& /*peer*/, int /*status*/) {}
};

}  // namespace rivet::engine
