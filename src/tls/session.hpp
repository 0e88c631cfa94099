// tls::Session: one connection's TLS state, over buffers the caller owns. It never touches a
// socket: the engine reads ciphertext from the socket itself and lends it to the session for one
// call (`in`, advanced past what was used), and every call appends what must be sent (handshake
// messages, records, alerts) to `out`, which the engine sends with its own writes. So batching
// stays the loop's, and a completion-based backend can carry TLS the same way.
//
// Between calls a session holds no record buffers (SSL_MODE_RELEASE_BUFFERS): an idle keep-alive
// connection costs OpenSSL's SSL object and no more.
#pragma once

#include <cstddef>
#include <cstdint>
#include <memory>
#include <string>
#include <string_view>

struct ssl_st;  // OpenSSL's SSL

namespace rivet::tls {

class Context;

// Why a handshake failed, as far as the server can tell.
enum class Failure : uint8_t {
    None,
    NoCommon,    // no protocol version, cipher suite or ALPN protocol in common
    PeerAlert,   // the client sent a fatal alert (it refused our certificate, for one)
    PeerClosed,  // the client sent close_notify before the handshake ended
    Malformed,   // not TLS, or a message out of place
};

class Session {
public:
    // The largest record a peer may send (2^14 plaintext plus the largest expansion TLS 1.2
    // allows); a partial one may wait inside the session between reads.
    static constexpr size_t kMaxRecord = 16 * 1024 + 2048 + 5;

    enum class Status : uint8_t {
        WantInput,  // needs more ciphertext: everything in `in` was used
        Ready,      // the handshake is finished, or plaintext came out (read)
        Closed,     // the peer sent close_notify
        Failed,     // the connection cannot go on (failure() says why, during a handshake)
    };

    explicit Session(std::shared_ptr<const Context> context);
    ~Session();
    Session(const Session&) = delete;
    Session& operator=(const Session&) = delete;

    // Goes on with the handshake. Ready: it is finished, and `in` may still hold the client's
    // first records (read() takes them).
    Status handshake(std::string_view& in, std::string& out);
    bool handshake_done() const { return done_; }
    // Part of a record is read but not yet decrypted: input the client has begun to send.
    bool partial_record() const;
    Failure failure() const { return failure_; }

    // Decrypts what `in` holds into [buf, buf + room). `status` Closed may come with bytes (the
    // client's last request and its close_notify in one read). The plaintext never exceeds the
    // ciphertext it comes from, so with `room` at least `in.size() + kMaxRecord` every byte fits
    // and nothing stays behind. Returns the bytes written; `status`: WantInput (all used), Closed
    // or Failed. A post-handshake message the session must answer leaves through `out`.
    size_t read(std::string_view& in, char* buf, size_t room, std::string& out, Status& status);
    // Encrypts all of `data` into `out` (records of at most 16 KiB). False: the session failed.
    bool write(std::string_view data, std::string& out);
    // The close_notify alert, before a graceful close.
    void close_notify(std::string& out);

    // What the handshake agreed on (valid once handshake_done()).
    bool resumed() const;
    bool tls13() const;
    std::string_view version() const;
    std::string_view cipher() const;
    std::string_view server_name() const;  // empty: the client sent none
    std::string_view alpn() const;         // empty: the client offered none

private:
    // What the BIO reads from and writes to during one call.
    struct Io {
        std::string_view* in = nullptr;
        std::string* out = nullptr;
    };
    struct Lend;  // sets io_ for one call and clears it after
    friend struct BioMethod;
    Failure classify_error() const;

    std::shared_ptr<const Context> context_;  // the SNI callback's, for the session's life
    ssl_st* ssl_ = nullptr;
    Io io_;
    bool done_ = false;
    bool broken_ = false;  // a record failed after the handshake: the session is not resumable
    Failure failure_ = Failure::None;
};

}  // namespace rivet::tls
