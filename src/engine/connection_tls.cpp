// Connection, the transport: the one place bytes meet the socket (sendfile aside). A plain
// connection reads and sends as it is; a TLS one runs its handshake first (Phase::Handshake),
// then decrypts what it reads and encrypts what it sends through its tls::Session, with the
// loop's buffers: the session never owns a socket or a buffer of its own between calls.
#include <sys/socket.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>

#include "engine/connection.hpp"
#include "engine/io_thread.hpp"

namespace rivet::engine {

namespace {

// Plaintext encrypted per batch of records: the backlog a connection may hold is about this.
constexpr size_t kTlsBatch = 64 * 1024;

TlsFailure failure_of(tls::Failure f) {
    switch (f) {
        case tls::Failure::NoCommon:
            return TlsFailure::NoCommon;
        case tls::Failure::PeerAlert:
            return TlsFailure::PeerAlert;
        case tls::Failure::PeerClosed:
            return TlsFailure::PeerClosed;
        default:
            return TlsFailure::Malformed;
    }
}

// A TLS connection's first byte is a handshake record's type (22); an HTTP request's is a
// method's capital letter.
constexpr unsigned char kHandshakeRecord = 0x16;

}  // namespace

ssize_t Connection::receive(char* buf, size_t room) {
    if (tls_) return receive_tls(buf, room);
    const ssize_t n = read(fd_, buf, room);
    input_drained_ = n >= 0 && size_t(n) < room;
    if (n > 0) LoopStats::bump(owner_.stats().bytes_in, uint64_t(n));
    return n;
}

// Reads ciphertext and returns the plaintext it holds, as read(2) would; -1 with EAGAIN also
// when the read only moved the handshake on (or ended the connection: phase_ says so).
ssize_t Connection::receive_tls(char* buf, size_t room) {
    // No more ciphertext than the plaintext room less one record: all it decrypts to then fits
    // (a record's plaintext is never longer than the record, and one partial record may wait
    // inside the session), so nothing stays decrypted and unannounced by epoll.
    const size_t want = std::min(IoThread::kReadBufferSize, room - tls::Session::kMaxRecord);
    char* cipher = owner_.tls_read_buffer();
    const ssize_t n = read(fd_, cipher, want);
    input_drained_ = n >= 0 && size_t(n) < want;
    if (n <= 0) {
        if (phase_ == Phase::Handshake && (n == 0 || (errno != EAGAIN && errno != EINTR)))
            tls_failed(TlsFailure::PeerClosed);  // the close follows from the caller's EOF path
        return n;
    }
    std::string& out = owner_.tls_write_buffer();
    std::string_view in(cipher, size_t(n));
    if (phase_ == Phase::Handshake) {
        if (tls_->first_read) {
            tls_->first_read = false;
            if (static_cast<unsigned char>(cipher[0]) != kHandshakeRecord) {
                refuse_not_tls(cipher);
                errno = EAGAIN;
                return -1;
            }
        }
        const auto status = tls_->session.handshake(in, out);
        send_tls_output(out);
        if (status == tls::Session::Status::Failed) {
            tls_failed(failure_of(tls_->session.failure()));
            close_now();  // after the alert the session wrote, sent above as far as it goes
        }
        if (status != tls::Session::Status::Ready || phase_ == Phase::Closed) {
            errno = EAGAIN;
            return -1;
        }
        finish_handshake();
        if (in.empty()) {
            errno = EAGAIN;
            return -1;
        }
    }
    tls::Session::Status status;
    const size_t got = tls_->session.read(in, buf, room, out, status);
    send_tls_output(out);
    // The socket is emptied only if no record waits half-read inside the session either.
    input_drained_ = input_drained_ && !tls_->session.partial_record();
    if (phase_ == Phase::Closed) {
        errno = EAGAIN;
        return -1;
    }
    if (status == tls::Session::Status::Failed) {
        close_now();
        errno = EAGAIN;
        return -1;
    }
    if (got > 0) {
        // A close_notify read with the bytes is not announced again: on_readable ends reading
        // after serving them.
        if (status == tls::Session::Status::Closed) tls_->peer_closed = true;
        LoopStats::bump(owner_.stats().bytes_in, got);
        return ssize_t(got);
    }
    if (status == tls::Session::Status::Closed) return 0;  // close_notify: the client is done
    errno = EAGAIN;
    return -1;
}

void Connection::finish_handshake() {
    auto& s = owner_.stats();
    const bool v13 = tls_->session.tls13();
    if (tls_->session.resumed())
        LoopStats::bump(v13 ? s.tls_resumed_tls13 : s.tls_resumed_tls12);
    else
        LoopStats::bump(v13 ? s.tls_full_tls13 : s.tls_full_tls12);
    phase_ = Phase::Head;
    // The request head's clock starts now, as nginx's client_header_timeout does after the
    // handshake: the handshake had its own.
    head_started_ms_ = owner_.loop().now_ms();
    update_interest();
    arm_timer();
}

// Bytes that are not TLS on the TLS port. A request in plain HTTP gets a plain-HTTP 400 that
// says where it went wrong, as nginx answers; anything else is closed without a word.
void Connection::refuse_not_tls(const char* data) {
    const bool http = data[0] >= 'A' && data[0] <= 'Z';
    tls_failed(http ? TlsFailure::PlainHttp : TlsFailure::Malformed);
    if (!http) return close_now();
    tls_.reset();
    phase_ = Phase::Head;
    discarded_input_ = true;  // the request is not read: the close lingers
    fail(400, "the plain HTTP request was sent to the HTTPS port");
    flush();
}

void Connection::tls_failed(TlsFailure why) {
    if (tls_->failure_counted) return;
    tls_->failure_counted = true;
    LoopStats::bump(owner_.stats().tls_failures[size_t(why)]);
}

// Sends what a session call wrote (handshake messages, alerts, tickets) behind any backlog;
// what the socket does not take joins the backlog.
void Connection::send_tls_output(std::string& out) {
    if (out.empty()) return;
    size_t sent = 0;
    if (tls_->backlog.empty()) {
        const ssize_t n = send(fd_, out.data(), out.size(), MSG_NOSIGNAL);
        sent = n > 0 ? size_t(n) : 0;  // a failed socket shows at the next read or write
    }
    if (tls_->backlog.empty() && sent < out.size()) write_progress_ms_ = owner_.loop().now_ms();
    tls_->backlog.append(out, sent);
    out.clear();
    if (!tls_->backlog.empty()) update_interest();
}

bool Connection::send_tls_backlog() {
    std::string& b = tls_->backlog;
    if (b.empty()) return true;
    const ssize_t n = send(fd_, b.data(), b.size(), MSG_NOSIGNAL);
    if (n < 0) {
        if (errno != EAGAIN && errno != EINTR) close_now();
        return false;
    }
    write_progress_ms_ = owner_.loop().now_ms();
    if (size_t(n) < b.size()) {
        b.erase(0, size_t(n));
        return false;
    }
    std::string().swap(b);  // an idle connection keeps no buffer
    return true;
}

ssize_t Connection::send_bytes(const char* data, size_t len, int flags) {
    if (!tls_) return send(fd_, data, len, flags | MSG_NOSIGNAL);
    if (!send_tls_backlog()) {
        errno = phase_ == Phase::Closed ? EPIPE : EAGAIN;
        return -1;
    }
    std::string& out = owner_.tls_write_buffer();
    size_t used = 0;
    while (used < len && tls_->backlog.empty()) {
        const size_t take = std::min(len - used, kTlsBatch);
        if (!tls_->session.write({data + used, take}, out)) {
            out.clear();
            errno = EPROTO;
            return -1;
        }
        used += take;
        const ssize_t n =
            send(fd_, out.data(), out.size(), MSG_NOSIGNAL | (used == len ? flags : 0));
        if (n < 0 && errno != EAGAIN && errno != EINTR) {
            out.clear();
            return -1;
        }
        const size_t sent = n > 0 ? size_t(n) : 0;
        if (sent < out.size()) tls_->backlog.assign(out, sent);
        out.clear();
    }
    return ssize_t(used);
}

void Connection::send_close_notify() {
    if (!tls_ || !tls_->backlog.empty()) return;
    std::string& out = owner_.tls_write_buffer();
    tls_->session.close_notify(out);
    if (!out.empty()) (void)send(fd_, out.data(), out.size(), MSG_NOSIGNAL);  // best effort
    out.clear();
}

TlsFacts Connection::tls_facts() const {
    if (!tls_ || !tls_->session.handshake_done()) return {};
    const tls::Session& s = tls_->session;
    return {true, s.resumed(), s.server_name(), s.version(), s.cipher(), s.alpn()};
}

}  // namespace rivet::engine
