// Http1Session, the output side: writing through the transport, readiness interest, timeouts
// and closing.
#include <algorithm>
#include <cerrno>

#include "engine/http1/session.hpp"
#include "engine/io_thread.hpp"
#include "net/socket.hpp"

namespace rivet::engine {

void Http1Session::flush() {
    if (phase_ == Phase::Closed) return;
    std::string& shared = owner_.write_buffer();
    Transport& transport = conn_.transport();
    // What the transport holds (TLS records) goes first; while some waits, it takes no more.
    if (transport.backlog() && !transport.flush_backlog() && errno != EAGAIN && errno != EINTR)
        return close_now();
    for (;;) {
        if (!out_.empty()) {
            ssize_t n = transport.write({out_.data() + out_sent_, out_.size() - out_sent_});
            if (n < 0) {
                if (errno == EAGAIN || errno == EINTR) break;
                return close_now();
            }
            LoopStats::bump(owner_.stats().bytes_out, uint64_t(n));
            if (n > 0) transport.write_progress_ms = owner_.loop().now_ms();
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
            const bool fin_follows = phase_ == Phase::Closing && !owes();
            ssize_t n = transport.write(shared, fin_follows);
            if (n < 0 && errno != EAGAIN && errno != EINTR) {
                shared.clear();
                return close_now();
            }
            size_t sent = n > 0 ? size_t(n) : 0;
            LoopStats::bump(owner_.stats().bytes_out, sent);
            // A fresh answer starts the write clock even if nothing could leave yet.
            transport.write_progress_ms = owner_.loop().now_ms();
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
        if (pending_->stream_waiting) {
            // Draining, and the output the stream waited behind has left: it ends now.
            if (!owner_.draining()) break;
            finish_stream(false);
            continue;
        }
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
bool Http1Session::send_file_piece() {
    auto& f = pending_->file;
    Transport& transport = conn_.transport();
    const size_t piece = transport.file_piece();
    const ssize_t n = transport.send_file(f.fd, f.offset, std::min<uint64_t>(f.length, piece));
    if (n < 0 && (errno == EAGAIN || errno == EINTR)) return false;
    if (n <= 0) {  // 0: the file shrank under us: the promised length can no longer be kept
        close_now();
        return false;
    }
    LoopStats::bump(owner_.stats().bytes_out, uint64_t(n));
    f.offset += uint64_t(n);
    transport.write_progress_ms = owner_.loop().now_ms();
    f.length -= uint64_t(n);
    const bool socket_took_all = size_t(n) == piece && !transport.backlog();
    if (f.length > 0) return socket_took_all && ++body_pieces_this_flush_ < kBodyPiecesPerFlush;
    pending_->file = {};
    if (auto trailers = std::move(pending_->trailers))  // chunked: the chunk ends, then the last
        http::append_file_chunk_end(output(), trailers->fields);
    if (pending_->body_ends_connection) end_reading();
    release_ready_slots();
    return true;
}

// What the connection does once the output is written: close, send an owed 100 Continue, pause
// or resume reading, and wait for the next event with the timeout its phase calls for.
void Http1Session::after_flush() {
    if (phase_ == Phase::Closed) return;
    body_pieces_this_flush_ = 0;
    charge_output();
    const bool done = !unsent() && !owes();
    if (done && phase_ == Phase::Switching) return switch_session();
    if (done && (phase_ == Phase::Closing || peer_eof_)) return begin_close();
    if (done && !input_waiting() && owner_.draining()) return begin_close();
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
    if (phase_ == Phase::Paused && !should_pause()) {
        // Buffered requests are not announced again by epoll: served now. With none, the
        // connection reads again, or rests (below) after a large file or a stream.
        phase_ = Phase::Head;
        if (!in_.empty()) return serve_buffered();
    }
    if (phase_ == Phase::Head && should_pause()) phase_ = Phase::Paused;
    if (may_rest()) {
        phase_ = Phase::Closed;  // to itself: the connection goes on without it
        return conn_.rest();
    }
    update_interest();
    arm_timer();
}

// Between two requests with nothing in hand, the connection needs no session until the next
// byte (Connection::Stage::Resting): not inside a read that serves more, and not when the
// session must remember something of this connection (the client's EOF, dropped input).
bool Http1Session::may_rest() const {
    return phase_ == Phase::Head && !serving_ && conn_.requests_served() > 0 && idle() &&
           !upload_ && !peer_eof_ && !discarded_input_ && !conn_.transport().peer_closed();
}

void Http1Session::update_interest() {
    uint8_t want = 0;
    if (phase_ == Phase::Head || phase_ == Phase::Body || phase_ == Phase::Lingering)
        want |= net::kReadable;
    // A streamed body is read only while its handler asks and nothing is buffered.
    if (phase_ == Phase::Stream && upload_->waiting && in_.empty()) want |= net::kReadable;
    if (sending()) want |= net::kWritable;
    // A waiting stream: only the client's leaving is watched (watch_peer_while_waiting).
    if (stream_waiting() && !unsent() && !pending_->input_behind_stream) want |= net::kReadable;
    conn_.set_interest(want);
}

void Http1Session::arm_timer() {
    const auto& cfg = owner_.config().timeouts;
    uint64_t now = owner_.loop().now_ms();
    if (phase_ == Phase::Lingering) return conn_.schedule(cfg.linger_ms);
    // A waiting stream with all sent is timed by nothing (owes(), below) but the drain, which
    // ends it: like a long-lived proxied stream in nginx, it is open as long as its producer
    // wants. A client that does not read what it was sent is timed as any other.
    if (sending()) {
        // Judged over windows of the write timeout on what the client took (send_timer_ran):
        // input from a client that never reads must not keep the connection (and its unsent
        // output) alive, nor a client that takes a few bytes now and then.
        send_pace_.waiting(now, conn_.transport());
        const uint64_t deadline = send_pace_.window_end_ms(cfg.write_ms);
        return conn_.schedule(deadline > now ? deadline - now : 0);
    }
    send_pace_.idle();
    // Waiting for the body budget is the server's doing, but not for ever: past the body
    // timeout the request is refused (503, on_timeout), so slow bodies that hold the budget
    // cannot hold every other upload with it.
    if (phase_ == Phase::BodyWait) {
        const uint64_t deadline = body_->wait_since_ms + cfg.body_ms;
        return conn_.schedule(deadline > now ? deadline - now : 0);
    }
    // A streamed body not asked for is the handler's doing: the client is timed, and its pace
    // judged, only while its body is wanted.
    if (phase_ == Phase::Stream) {
        if (!upload_->waiting) {
            pace_.pause(now);
            return conn_.cancel_timer();
        }
        pace_.resume(now);
        return arm_body_timer(now);
    }
    if (owes()) return conn_.cancel_timer();
    if (phase_ == Phase::Body) return arm_body_timer(now);
    if (in_.empty() && conn_.requests_served() > 0) return conn_.schedule(cfg.idle_ms);  // may rest
    // A fresh connection owes us a request head. The head's clock does not restart with each
    // byte, or a slow sender could hold us forever.
    uint64_t deadline = head_started_ms_ + cfg.header_ms;
    conn_.schedule(deadline > now ? deadline - now : 0);
}

// The body timeout counts from the last read (arm_timer runs after each); the pace's window may
// end before it.
void Http1Session::arm_body_timer(uint64_t now) {
    body_deadline_ms_ = now + owner_.config().timeouts.body_ms;
    schedule_body_check(now);
}

void Http1Session::schedule_body_check(uint64_t now) {
    const auto& cfg = owner_.config();
    const uint64_t at = std::min(
        body_deadline_ms_, pace_.window_end_ms(cfg.limits.min_body_rate, cfg.timeouts.body_ms));
    conn_.schedule(at > now ? at - now : 0);
}

// Whether the timer arm_timer() set is the body's (the order there decides).
bool Http1Session::body_timed() const {
    if (phase_ == Phase::Lingering || sending()) return false;
    if (phase_ == Phase::BodyWait) return true;
    if (phase_ == Phase::Stream) return bool(upload_->waiting);
    return phase_ == Phase::Body && !owes();
}

void Http1Session::on_timeout() {
    // Header, idle, write or linger time is up: close quietly, as nginx does. A request whose
    // body stops is answered first (408; 503 when the server's budget kept it waiting), as the
    // client is still there and waits for one.
    if (phase_ != Phase::Lingering && sending()) return send_timer_ran(owner_.loop().now_ms());
    if (!body_timed()) return close_now();
    if (phase_ == Phase::BodyWait)
        return refuse_body(503, "the server is receiving too many request bodies; try again",
                           kBudgetRetryAfterS);
    // A loop that ran late may find bytes the client sent in time: they are read first.
    if ((phase_ == Phase::Body || in_.empty()) && conn_.transport().unread_in_socket() > 0)
        return on_readable();
    body_timer_ran(owner_.loop().now_ms());
}

void Http1Session::body_timer_ran(uint64_t now) {
    const auto& cfg = owner_.config();
    const bool in_time = now < body_deadline_ms_;
    if (in_time && pace_.judge(now, cfg.limits.min_body_rate, cfg.timeouts.body_ms))
        return schedule_body_check(now);
    refuse_body(408, in_time ? "the request body arrived slower than the minimum rate"
                             : "the request body stopped arriving");
}

// A window of the write timeout ended with answers still waiting for the client: it goes on when
// the client took enough over it (SendPace), else the connection is reset (quietly, as a write
// timeout always closed: an answer could not reach it).
void Http1Session::send_timer_ran(uint64_t now) {
    const auto& cfg = owner_.config();
    if (send_pace_.judge(now, conn_.transport(), cfg.limits.min_send_rate, cfg.timeouts.write_ms) ==
        SendPace::Verdict::Keep)
        return arm_timer();
    net::reset_on_close(conn_.fd());
    close_now();
}

uint64_t Http1Session::output_held() const {
    uint64_t held = out_.size() - out_sent_;
    if (pending_)
        for (const Slot& slot : pending_->slots)
            held += slot.bytes.size() + (slot.reply ? slot.reply->body.size() : 0);
    return held;
}

void Http1Session::charge_output() {
    const uint64_t now = phase_ == Phase::Closed ? 0 : output_held();
    if (now == output_charged_) return;
    owner_.budget().charge_output(output_charged_, now);
    output_charged_ = now;
}

void Http1Session::refuse_body(int status, const char* reason, unsigned retry_after_s) {
    discarded_input_ = true;  // the rest of the body is not read: the close lingers
    if (phase_ == Phase::Stream) {
        std::shared_ptr<BodyStream> stream = upload_;
        stream->fail(status, reason);
        fail_upload();  // in place of the handler's answer, which is still owed
        if (stream->waiting) stream->deliver_later();
    } else {
        // The head leaves body_ first: the refusal ends reading, which drops body_.
        std::unique_ptr<BodyInProgress> refused = std::move(body_);
        phase_ = Phase::Head;
        fail(status, reason, &refused->head, 0, retry_after_s);
    }
    flush();
}

void Http1Session::begin_close() {
    if (peer_eof_) return close_now();
    if (!discarded_input_ && !input_waiting()) {
        // Closing from the read that did not fill the buffer, the socket is known empty, as
        // nginx reasons too; any later close (a worker's answer, a long body) asks the kernel.
        Transport& transport = conn_.transport();
        if (transport.drained() || transport.unread_in_socket() == 0) {
            // The last answer may still wait in the socket (MSG_MORE): send it with the FIN
            // first. Input can have arrived since the check (the handler ran after the read),
            // and close() with unread input sends a RST and discards what is still unsent.
            transport.shutdown_write();
            return close_now();
        }
    }
    // Unread input is still arriving: closing now would answer it with a RST that can destroy
    // the response we just sent. Shut our side, read and drop until the client closes.
    conn_.transport().shutdown_write();
    phase_ = Phase::Lingering;
    body_.reset();
    drop_upload("the connection closed");
    std::string().swap(in_);
    update_interest();
    arm_timer();
}

void Http1Session::drop_input() {
    if (!conn_.transport().discard_input()) close_now();
}

// The answer that handed the connection over has left: the next session takes it, with what was
// read after that request. This session is done (Closed to itself) but not the connection.
void Http1Session::switch_session() {
    SessionFactory make = std::move(pending_->then);
    std::string rest = std::move(in_);
    phase_ = Phase::Closed;
    drop_upload("the connection went on in another protocol");
    conn_.hand_off(make(conn_), rest);
}

void Http1Session::close_when_idle() {
    if (phase_ == Phase::Closed) return;
    // A connection accepted but not yet read may carry a request already: it gets answered
    // (with "Connection: close"), bounded by the header and drain timeouts. Otherwise
    // framing_for() now answers "Connection: close" and the connection ends after the
    // responses it owes.
    // A stream that waits with everything sent owes nothing but itself: it ends now (its last
    // chunk), and the connection after it. One that is sending ends when it next waits.
    if (stream_waiting() && !unsent()) {
        finish_stream(false);
        end_reading();
        return flush();
    }
    if (!idle() || conn_.requests_served() == 0) return;
    // Idle to us, but a request may wait in the socket, unread because it arrived while the
    // loop was busy: closing now would answer it with a RST. Read it as any read would; it is
    // answered with "Connection: close" and after_flush() closes. Half a head waits for the
    // rest, bounded by the header and drain timeouts.
    if (phase_ == Phase::Head && conn_.transport().unread_in_socket() > 0) return on_readable();
    close_now();
}

}  // namespace rivet::engine
