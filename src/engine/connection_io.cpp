// Connection, the socket side: writing, readiness interest, timeouts and closing.
#include <sys/ioctl.h>
#include <sys/sendfile.h>
#include <sys/socket.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>

#include "engine/connection.hpp"
#include "engine/io_thread.hpp"

namespace rivet::engine {

void Connection::flush() {
    if (phase_ == Phase::Closed) return;
    std::string& shared = owner_.write_buffer();
    // TLS records made earlier go first; while some wait, send_bytes() takes no more plaintext.
    if (tls_ && !tls_->backlog.empty()) send_tls_backlog();
    if (phase_ == Phase::Closed) return;
    for (;;) {
        if (!out_.empty()) {
            ssize_t n = send_bytes(out_.data() + out_sent_, out_.size() - out_sent_, 0);
            if (n < 0) {
                if (errno == EAGAIN || errno == EINTR) break;
                return close_now();
            }
            LoopStats::bump(owner_.stats().bytes_out, uint64_t(n));
            if (n > 0) write_progress_ms_ = owner_.loop().now_ms();
            out_sent_ += size_t(n);
            if (out_sent_ < out_.size()) {
                // Sent bytes go in bulk once they are the larger part: each byte is moved at
                // most once on average, however small the writes the socket takes.
                if (out_sent_ > out_.size() / 2) {
                    out_.erase(0, out_sent_);
                    out_sent_ = 0;
                }
                break;
            }
            out_.clear();
            out_sent_ = 0;
        } else if (!shared.empty()) {
            // The connection's last answer: MSG_MORE holds it in the socket for the close (or
            // shutdown) that after_flush() makes in this same call, whose FIN then leaves in
            // the same segment: one packet and one ACK fewer per short connection.
            int flags = 0;
            if (phase_ == Phase::Closing && !owes()) flags |= MSG_MORE;
            ssize_t n = send_bytes(shared.data(), shared.size(), flags);
            if (n < 0 && errno != EAGAIN && errno != EINTR) {
                shared.clear();
                return close_now();
            }
            size_t sent = n > 0 ? size_t(n) : 0;
            LoopStats::bump(owner_.stats().bytes_out, sent);
            // A fresh answer starts the write clock even if nothing could leave yet.
            write_progress_ms_ = owner_.loop().now_ms();
            if (sent < shared.size()) out_.assign(shared, sent);  // the rest waits for EPOLLOUT
            shared.clear();
            if (!out_.empty()) break;
        }
        // Everything written: a file or a stream may have more to give.
        if (pending_ && pending_->file.owner) {
            if (!send_file_piece()) break;
            continue;
        }
        if (!pending_ || !pending_->stream) break;
        // A producer slower than its reader never fills the socket: without this cap the
        // loop would pump it forever and serve no other connection.
        if (body_pieces_this_flush_++ >= kBodyPiecesPerFlush) break;
        try {
            pump_stream();
        } catch (...) {
            shared.clear();
            return close_now();  // the head is gone already: all we can do is cut it short
        }
    }
    if (phase_ == Phase::Closed) return;
    if (out_.empty() && out_.capacity() > 0) std::string().swap(out_);
    after_flush();
}

// Sends up to a few hundred KiB of the file body; the rest waits for the next writable turn, so
// one large download cannot hold the loop. Returns whether the socket may take more now.
bool Connection::send_file_piece() {
    auto& f = pending_->file;
    // Over TLS (no kernel TLS here) the piece is read into the loop's buffer and leaves as
    // records: never more of the file in memory than one piece.
    const size_t piece = tls_ ? IoThread::kReadBufferSize : size_t(256 * 1024);
    ssize_t n;
    if (tls_) {
        if (!tls_->backlog.empty()) return false;  // the socket has not taken the last piece
        n = pread(f.fd, owner_.tls_read_buffer(), std::min<uint64_t>(f.length, piece),
                  off_t(f.offset));
        if (n > 0 && send_bytes(owner_.tls_read_buffer(), size_t(n), 0) != n) n = -1;
    } else {
        off_t offset = off_t(f.offset);
        n = sendfile(fd_, f.fd, &offset, std::min<uint64_t>(f.length, piece));
    }
    if (n < 0) {
        if (!tls_ && (errno == EAGAIN || errno == EINTR)) return false;
        close_now();
        return false;
    }
    if (n == 0) {  // the file shrank under us: the promised length can no longer be kept
        close_now();
        return false;
    }
    LoopStats::bump(owner_.stats().bytes_out, uint64_t(n));
    f.offset += uint64_t(n);
    write_progress_ms_ = owner_.loop().now_ms();
    f.length -= uint64_t(n);
    const bool socket_took_all = tls_ ? tls_->backlog.empty() : size_t(n) == piece;
    if (f.length > 0) return socket_took_all && ++body_pieces_this_flush_ < kBodyPiecesPerFlush;
    pending_->file = {};
    if (pending_->body_ends_connection) end_reading();
    release_ready_slots();
    return true;
}

// What the connection does once the output is written: close, send an owed 100 Continue, pause
// or resume reading, and wait for the next event with the timeout its phase calls for.
void Connection::after_flush() {
    if (phase_ == Phase::Closed) return;
    body_pieces_this_flush_ = 0;
    const bool done = !unsent() && !owes();
    if (done && (phase_ == Phase::Closing || peer_eof_)) return begin_close();
    // A handshake in progress may finish: the handshake timeout bounds it, as the header
    // timeout bounds a fresh connection's request.
    if (done && !input_waiting() && owner_.draining() && phase_ != Phase::Handshake)
        return begin_close();
    if (phase_ == Phase::Body && body_->continue_owed && !owes()) {
        body_->continue_owed = false;
        send_continue();
        return flush();
    }
    if (phase_ == Phase::Stream && upload_->continue_owed && upload_->waiting &&
        !answers_owed_before_upload()) {
        upload_->continue_owed = false;
        send_continue();
        return flush();
    }
    if (phase_ == Phase::Paused && !should_pause()) return resume_reading();
    if (phase_ == Phase::Head && should_pause()) phase_ = Phase::Paused;
    update_interest();
    arm_timer();
}

void Connection::update_interest() {
    uint8_t want = 0;
    if (phase_ == Phase::Head || phase_ == Phase::Body || phase_ == Phase::Lingering ||
        phase_ == Phase::ProxyHeader || phase_ == Phase::Handshake)
        want |= net::kReadable;
    // A streamed body is read only while its handler asks and nothing is buffered.
    if (phase_ == Phase::Stream && upload_->waiting && in_.empty()) want |= net::kReadable;
    if (unsent() || sending_body()) want |= net::kWritable;
    if (want != interest_) {
        interest_ = want;
        if (registered_) owner_.loop().modify(fd_, want, this);  // else start() adds it so
    }
}

void Connection::arm_timer() {
    const auto& cfg = owner_.config().timeouts;
    auto& timers = owner_.loop().timers();
    uint64_t now = owner_.loop().now_ms();
    if (phase_ == Phase::Lingering) return timers.schedule(*this, cfg.linger_ms);
    if (phase_ == Phase::Handshake) {
        // From the accept, whatever the client sends meanwhile: a slow handshake cannot hold
        // the connection past it.
        uint64_t deadline = head_started_ms_ + cfg.handshake_ms;
        return timers.schedule(*this, deadline > now ? deadline - now : 0);
    }
    if (unsent() || sending_body()) {
        // Counted from the last write that moved bytes: input from a client that never reads
        // must not keep the connection (and its unsent output) alive.
        uint64_t deadline = write_progress_ms_ + cfg.write_ms;
        return timers.schedule(*this, deadline > now ? deadline - now : 0);
    }
    // Waiting for the body budget is the server's doing, and a streamed body not asked for is
    // the handler's: the client is timed only while its body is wanted.
    if (phase_ == Phase::BodyWait) return timers.cancel(*this);
    if (phase_ == Phase::Stream)
        return upload_->waiting ? timers.schedule(*this, cfg.body_ms) : timers.cancel(*this);
    if (owes()) return timers.cancel(*this);
    if (phase_ == Phase::Body) return timers.schedule(*this, cfg.body_ms);
    if (in_.empty() && served_ > 0) return timers.schedule(*this, cfg.idle_ms);  // may rest
    // A fresh connection owes us a request head. The head's clock does not restart with each
    // byte, or a slow sender could hold us forever.
    uint64_t deadline = head_started_ms_ + cfg.header_ms;
    timers.schedule(*this, deadline > now ? deadline - now : 0);
}

void Connection::on_timeout() {
    // Handshake, header, body, idle, write or linger time is up: close quietly, as nginx does.
    if (phase_ == Phase::Handshake) tls_failed(TlsFailure::Timeout);
    close_now();
}

void Connection::begin_close() {
    if (peer_eof_) return close_now();
    if (!discarded_input_ && !input_waiting()) {
        // Closing from the read that did not fill the buffer, the socket is known empty, as
        // nginx reasons too; any later close (a worker's answer, a long body) asks the kernel.
        int unread = 0;
        if (input_drained_ || (ioctl(fd_, FIONREAD, &unread) == 0 && unread == 0)) {
            // The last answer may still wait in the socket (MSG_MORE): send it with the FIN
            // first. Input can have arrived since the check (the handler ran after the read),
            // and close() with unread input sends a RST and discards what is still unsent.
            send_close_notify();
            shutdown(fd_, SHUT_WR);
            return close_now();
        }
    }
    // Unread input is still arriving: closing now would answer it with a RST that can destroy
    // the response we just sent. Shut our side, read and drop until the client closes.
    send_close_notify();
    shutdown(fd_, SHUT_WR);
    phase_ = Phase::Lingering;
    body_.reset();
    drop_upload("the connection closed");
    std::string().swap(in_);
    update_interest();
    arm_timer();
}

void Connection::drop_input() {
    ssize_t n = read(fd_, owner_.read_buffer(), IoThread::kReadBufferSize);
    if (n == 0 || (n < 0 && errno != EAGAIN && errno != EINTR)) close_now();
}

void Connection::close_when_idle() {
    if (phase_ == Phase::Closed) return;
    // A connection accepted but not yet read may carry a request already: it gets answered
    // (with "Connection: close"), bounded by the header and drain timeouts. Otherwise
    // framing_for() now answers "Connection: close" and the connection ends after the
    // responses it owes.
    if (!idle() || served_ == 0) return;
    // Idle to us, but a request may wait in the socket, unread because it arrived while the
    // loop was busy: closing now would answer it with a RST. Read it as any read would; it is
    // answered with "Connection: close" and after_flush() closes. Half a head waits for the
    // rest, bounded by the header and drain timeouts.
    int unread = 0;
    if (phase_ == Phase::Head && ioctl(fd_, FIONREAD, &unread) == 0 && unread > 0)
        return on_readable();
    close_now();
}

void Connection::close_now() {
    if (phase_ == Phase::Closed) return;
    // Whatever ends a handshake without a reason of its own (a reset, a hang-up, a failed
    // write) is the client's doing.
    if (phase_ == Phase::Handshake) tls_failed(TlsFailure::PeerClosed);
    phase_ = Phase::Closed;
    owner_.loop().timers().cancel(*this);
    drop_upload("the connection closed");
    body_.reset();  // gives back its share of the body budget now
    // Closing the socket drops its epoll registration only if no other process holds a copy:
    // a child forked by anything in this process (an in-place upgrade, a handler's system() or
    // popen()) holds one until it execs, and the loop would go on reporting events for this
    // Connection after it is freed. So the registration goes first; a connection answered and
    // closed in its first read was never registered and costs nothing.
    if (registered_) owner_.loop().remove(fd_);
    ::close(fd_);
    owner_.connection_closed(this);  // freed at the end of the turn: still ours below
    cancel_deferred();
}

}  // namespace rivet::engine
