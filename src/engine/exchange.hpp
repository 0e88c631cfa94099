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

#include "engine/body_source.hpp"
#include "engine/reply.hpp"
#include "http/request_parser.hpp"

namespace rivet::engine {

class Connection;
class IoThread;
class Deferred;

// How one request's body is read: Application::plan_body fills it in after the head is parsed
// and before any body byte is read.
struct BodyPlan {
    enum class Mode : uint8_t {
        Buffered,  // the whole body is read first, then serve() sees it in Exchange::body()
        Streamed,  // serve() runs right after the head; the body comes through Exchange::source()
    };
    uint64_t limit = 0;  // body bytes (decoded, for chunked); more: 413. Starts at max_body.
    Mode mode = Mode::Buffered;
};

// A peer's address as raw bytes (AF_INET: the first 4), cheaper than peer_address()'s text.
struct PeerIp {
    uint8_t family = 0;  // AF_INET or AF_INET6
    uint8_t bytes[16] = {};
};

// What a connection's TLS layer agreed on; `secure` false: plain HTTP. The views stay valid while
// the connection is open (an answer made later must copy what it keeps).
struct TlsFacts {
    bool secure = false;
    bool resumed = false;          // the handshake resumed an earlier session
    std::string_view server_name;  // the SNI name the client asked for; empty: none
    std::string_view version;      // "TLSv1.3", "TLSv1.2"
    std::string_view cipher;       // "TLS_AES_128_GCM_SHA256", "ECDHE-RSA-AES128-GCM-SHA256"
    std::string_view alpn;         // "http/1.1"; empty: the client offered no ALPN
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
    // Most answers are not deferred: the empty Deferred they return costs no call.
    ~Deferred() {
        if (valid()) abandon();
    }

    void complete(Reply&& reply);
    bool valid() const { return thread_ != nullptr; }
    // On the connection's loop thread, before the answer can be cancelled (i.e. before control
    // returns to the loop); replaces an earlier callback.
    void on_cancel(std::function<void()> fn);
    // True once the connection gave up on this answer (any thread; a hint: it may change after).
    bool cancelled() const;

private:
    friend class Http1Session;
    friend class Http2Stream;
    void abandon();  // dropped unanswered: a 500, so that its connection never waits forever
    std::shared_ptr<DeferredState> state_;
    IoThread* thread_ = nullptr;
    int fd_ = -1;
    uint64_t connection_id_ = 0;
    uint64_t sequence_ = 0;
};

// One answer to one request, in the form its maker has it. Every answer leaves through
// Responder::answer, whoever made it.
struct Answer {
    enum class Kind : uint8_t {
        Reply,    // a handler's: views, written at once or copied into a Reply if it must wait
        Simple,   // server-made plain text (404, 405, 503 ...): status, body, extra_fields
        Later,    // the place of an answer that comes later, from any thread (a Deferred)
        Refusal,  // a refused request's (400, 413 ...): `reply` (the application shaped it) or
                  // plain text; always the connection's last
    };
    Kind kind = Kind::Reply;
    const ReplyView* reply = nullptr;
    int status = 0;
    std::string_view body;
    std::string_view extra_fields;  // "Allow: GET\r\n"
    uint64_t slot = 0;  // Refusal: the deferred answer it takes the place of (0: a new one)
};

// What an Exchange answers through: the session that read the request (an HTTP/1.1 connection,
// an HTTP/2 stream), so the application's side is one whatever the protocol.
class Responder {
public:
    // The one entry point of answers. `head`: the request answered (null: a refusal inside the
    // head). Returns the Deferred of a Later answer, an empty one otherwise.
    virtual Deferred answer(const http::RequestHead* head, const Answer& answer) = 0;
    virtual Connection& connection() = 0;

protected:
    ~Responder() = default;
};

class Exchange {
public:
    // `loop`: the index of the I/O thread serving the request (asked for several times per
    // request, by the metrics and the access log: kept here rather than asked of the connection).
    Exchange(Responder& responder, unsigned loop, const http::RequestHead& head,
             std::string_view body, BodyStream* stream = nullptr)
        : responder_(responder), head_(head), body_(body), stream_(stream), loop_(loop) {}

    const http::RequestHead& head() const { return head_; }
    std::string_view body() const { return body_; }  // a buffered body (empty when streamed)
    bool streamed() const { return stream_ != nullptr; }
    // The streamed body (BodyPlan::Mode::Streamed); an empty source otherwise. The source may be
    // kept after serve() returns (an answer made later reads it on the loop's thread).
    BodySource source() const { return BodySource(stream_); }
    std::string peer_address() const;
    PeerIp peer_ip() const;
    unsigned loop_index() const { return loop_; }
    TlsFacts tls() const;

    void respond(const ReplyView& reply);
    // A protocol-level answer (404, 405, 503 ...) with a plain-text body and optional extra
    // fields ("Allow: GET\r\n").
    void respond_simple(int status, std::string_view body, std::string_view extra_fields = {});
    Deferred defer();
    // The connection the request came on: valid during serve(), and later on its loop while a
    // Deferred of this request is neither completed nor cancelled (it is cancelled at the close).
    Connection& connection() const { return responder_.connection(); }

    bool answered() const { return answered_; }
    // What respond/respond_simple answered (0: nothing yet, or deferred), and the body's size.
    int status() const { return status_; }
    uint64_t body_bytes() const { return body_bytes_; }

private:
    Responder& responder_;
    const http::RequestHead& head_;
    std::string_view body_;
    BodyStream* stream_;
    unsigned loop_;
    bool answered_ = false;
    int status_ = 0;
    uint64_t body_bytes_ = 0;
};

// A request the engine refuses (400, 413, 414, 431, 501, 505 ...), for Application to answer.
struct ProtocolError {
    int status = 400;
    const char* reason = "";                  // short and static, e.g. "content too large"
    const http::RequestHead* head = nullptr;  // the parsed head, or null (an error in the head)
    unsigned loop = 0;
    PeerIp peer;
    unsigned retry_after_s = 0;  // a 503: the answer says when to try again (0: it does not)
};

// Where the answer to a ProtocolError goes: respond() at most once, during
// Application::answer_protocol_error. Whatever the reply says, the connection then closes
// ("Connection: close"). Not answered: the engine's plain-text answer.
class ErrorReply {
public:
    void respond(const ReplyView& reply);
    bool answered() const { return answered_; }

private:
    friend class Http1Session;
    friend class Http2Stream;
    ErrorReply(Responder& r, uint64_t slot) : responder_(r), slot_(slot) {}
    Responder& responder_;
    uint64_t slot_;  // the streamed request's deferred answer it replaces (0: a new answer)
    bool answered_ = false;
};

class Application {
public:
    virtual ~Application() = default;
    // Called on an I/O loop thread; must not block. An exception escaping it answers 500.
    virtual void serve(Exchange& exchange) = 0;
    // Called for every request head, on the loop's thread, before its body is read (and before
    // serve()); `plan` arrives as {max_body, Buffered}. Must be cheap and not throw.
    virtual void plan_body(const http::RequestHead& /*head*/, BodyPlan& /*plan*/) {}
    // A request the engine refused: told here for logs and counters (on the loop's thread,
    // must not block), then answered by answer_protocol_error.
    virtual void on_protocol_error(unsigned /*loop*/, const PeerIp& /*peer*/, int /*status*/) {}
    // Shapes the answer to a refused request; the default leaves it to the engine's plain text
    // ("413 Payload Too Large: content too large\n"). The connection closes after it.
    virtual void answer_protocol_error(const ProtocolError& /*error*/, ErrorReply& /*reply*/) {}
    // About once a second on each loop's thread (kTickMs), for housekeeping that must run on
    // the loop that owns what it tidies. Must not block.
    virtual void on_tick(unsigned /*loop*/) {}
};

}  // namespace rivet::engine
