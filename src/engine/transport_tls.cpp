// TlsTransport: the handshake, records in and out, and files as records (no kernel TLS here).
#include "engine/transport_tls.hpp"

#include <sys/socket.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>

#include "engine/io_thread.hpp"
#include "net/socket_io.hpp"

namespace rivet::engine {

namespace {

// Plaintext encrypted per batch of records: the backlog a connection may hold is about this.
constexpr size_t kTlsBatch = 64 * 1024;

// A TLS connection's first byte is a handshake record's type (22); an HTTP request's is a
// method's capital letter.
constexpr unsigned char kHandshakeRecord = 0x16;

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

}  // namespace

TlsTransport::TlsTransport(IoThread& owner, int fd, std::shared_ptr<const tls::Context> context)
    : Transport(owner, fd), session_(std::move(context)) {}

ssize_t TlsTransport::read_cipher(std::string_view& in, size_t want) {
    from_pending_ = !pending_.empty();
    if (from_pending_) {
        in = {pending_.data(), std::min(pending_.size(), want)};
        drained_ = false;  // what the socket holds meanwhile is not known
        return ssize_t(in.size());
    }
    char* cipher = owner_.tls_read_buffer();
    const ssize_t n = net::read_socket(fd_, cipher, want);
    drained_ = n >= 0 && size_t(n) < want;
    if (n > 0) in = {cipher, size_t(n)};
    return n;
}

void TlsTransport::used_pending(size_t used) {
    if (!from_pending_) return;
    if (used >= pending_.size())
        std::string().swap(pending_);
    else
        pending_.erase(0, used);
}

TlsTransport::Step TlsTransport::handshake() {
    std::string_view in;
    // As much as a read after it may take (see read()): what follows the handshake in this
    // read is decrypted by the first read() without a socket read of its own.
    const ssize_t n = read_cipher(in, IoThread::kReadBufferSize - tls::Session::kMaxRecord);
    if (n <= 0) {
        if (n == 0 || (errno != EAGAIN && errno != EINTR)) {
            count_failure(TlsFailure::PeerClosed);
            return Step::Failed;
        }
        return Step::More;
    }
    if (first_read_) {
        first_read_ = false;
        if (static_cast<unsigned char>(in[0]) != kHandshakeRecord) {
            // Plain HTTP on the TLS port gets a plain-HTTP 400, as nginx answers; anything else
            // is closed without a word.
            const bool http = in[0] >= 'A' && in[0] <= 'Z';
            count_failure(http ? TlsFailure::PlainHttp : TlsFailure::Malformed);
            return http ? Step::PlainHttp : Step::Failed;
        }
    }
    std::string& out = owner_.tls_write_buffer();
    const size_t before = in.size();
    const auto status = session_.handshake(in, out);
    send_output(out);
    if (status == tls::Session::Status::Failed) {
        count_failure(failure_of(session_.failure()));
        return Step::Failed;
    }
    if (from_pending_)
        used_pending(before - in.size());
    else if (status == tls::Session::Status::Ready && !in.empty())
        pending_.assign(in);  // the client's first records, for the first read()
    if (status != tls::Session::Status::Ready) return Step::More;
    auto& s = owner_.stats();
    const bool v13 = session_.tls13();
    if (session_.resumed())
        LoopStats::bump(v13 ? s.tls_resumed_tls13 : s.tls_resumed_tls12);
    else
        LoopStats::bump(v13 ? s.tls_full_tls13 : s.tls_full_tls12);
    return Step::Done;
}

void TlsTransport::count_failure(TlsFailure why) {
    if (failure_counted_ || session_.handshake_done()) return;
    failure_counted_ = true;
    LoopStats::bump(owner_.stats().tls_failures[size_t(why)]);
}

// Reads ciphertext and returns the plaintext it holds, as read(2) would; -1 with EAGAIN when the
// read held no whole record.
ssize_t TlsTransport::read(char* buf, size_t room) {
    // No more ciphertext than the plaintext room less one record: all it decrypts to then fits
    // (a record's plaintext is never longer than the record, and one partial record may wait
    // inside the session), so nothing stays decrypted and unannounced by epoll.
    if (room <= tls::Session::kMaxRecord) {
        errno = ENOBUFS;
        return -1;
    }
    std::string_view in;
    const ssize_t n =
        read_cipher(in, std::min(IoThread::kReadBufferSize, room - tls::Session::kMaxRecord));
    if (n <= 0) return n;
    std::string& out = owner_.tls_write_buffer();
    tls::Session::Status status;
    const size_t before = in.size();
    const size_t got = session_.read(in, buf, room, out, status);
    used_pending(before - in.size());
    send_output(out);
    // The socket is emptied only if no record waits half-read inside the session either.
    drained_ = drained_ && !session_.partial_record();
    if (status == tls::Session::Status::Failed) {
        errno = EPROTO;
        return -1;
    }
    if (got > 0) {
        // A close_notify read with the bytes is not announced again: peer_closed() says so.
        if (status == tls::Session::Status::Closed) peer_closed_ = true;
        LoopStats::bump(owner_.stats().bytes_in, got);
        return ssize_t(got);
    }
    if (status == tls::Session::Status::Closed) return 0;  // close_notify: the client is done
    errno = EAGAIN;
    return -1;
}

// Sends what a session call wrote (handshake messages, alerts, tickets) behind any backlog;
// what the socket does not take joins the backlog. A failed socket shows at the next read or
// write.
void TlsTransport::send_output(std::string& out) {
    if (out.empty()) return;
    size_t sent = 0;
    if (backlog_.empty()) {
        const ssize_t n = net::send_socket(fd_, out.data(), out.size(), MSG_NOSIGNAL);
        sent = n > 0 ? size_t(n) : 0;
        if (sent < out.size()) write_progress_ms = owner_.loop().now_ms();
    }
    backlog_.append(out, sent);
    out.clear();
}

bool TlsTransport::flush_backlog() {
    if (backlog_.empty()) return true;
    const ssize_t n = net::send_socket(fd_, backlog_.data(), backlog_.size(), MSG_NOSIGNAL);
    if (n < 0) return false;  // errno says whether it is for now (EAGAIN) or for good
    write_progress_ms = owner_.loop().now_ms();
    if (size_t(n) < backlog_.size()) {
        backlog_.erase(0, size_t(n));
        errno = EAGAIN;
        return false;
    }
    std::string().swap(backlog_);  // an idle connection keeps no buffer
    return true;
}

ssize_t TlsTransport::write(std::span<const std::string_view> pieces, bool more) {
    if (!flush_backlog()) return -1;
    std::string& out = owner_.tls_write_buffer();
    size_t total = 0;
    for (std::string_view p : pieces) total += p.size();
    size_t used = 0;
    for (std::string_view p : pieces) {
        for (size_t at = 0; at < p.size() && backlog_.empty();) {
            const size_t take = std::min(p.size() - at, kTlsBatch);
            if (!session_.write(p.substr(at, take), out)) {
                out.clear();
                errno = EPROTO;
                return -1;
            }
            at += take;
            used += take;
            const int flags = MSG_NOSIGNAL | (more && used == total ? MSG_MORE : 0);
            const ssize_t n = net::send_socket(fd_, out.data(), out.size(), flags);
            if (n < 0 && errno != EAGAIN && errno != EINTR) {
                out.clear();
                return -1;
            }
            const size_t sent = n > 0 ? size_t(n) : 0;
            if (sent < out.size()) backlog_.assign(out, sent);
            out.clear();
        }
        if (!backlog_.empty()) break;
    }
    return ssize_t(used);
}

size_t TlsTransport::file_piece() const {
    return IoThread::kReadBufferSize;
}

// Over TLS (no kernel TLS here) the piece is read into the loop's buffer and leaves as records:
// never more of the file in memory than one piece. Returns 0 (not an error) while the last
// piece's records still wait in the backlog.
ssize_t TlsTransport::send_file(int file, uint64_t offset, size_t len) {
    if (!backlog_.empty()) {
        errno = EAGAIN;
        return -1;
    }
    char* piece = owner_.tls_read_buffer();
    const ssize_t n = ::pread(file, piece, std::min(len, file_piece()), off_t(offset));
    if (n <= 0) {
        if (n == 0) errno = ENODATA;  // the file shrank under us
        return -1;
    }
    if (write({piece, size_t(n)}) != n) return -1;
    return n;
}

void TlsTransport::shutdown_write() {
    if (backlog_.empty() && session_.handshake_done()) {
        std::string& out = owner_.tls_write_buffer();
        session_.close_notify(out);
        if (!out.empty()) (void)::send(fd_, out.data(), out.size(), MSG_NOSIGNAL);  // best effort
        out.clear();
    }
    Transport::shutdown_write();
}

TlsFacts TlsTransport::tls_facts() const {
    if (!session_.handshake_done()) return {};
    return {true,
            session_.resumed(),
            session_.server_name(),
            session_.version(),
            session_.cipher(),
            session_.alpn()};
}

}  // namespace rivet::engine
