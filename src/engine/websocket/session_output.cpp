// WebSocketSession, the output side: frames into the output, writing through the transport,
// backpressure and the bound on a slow reader, and the end of the connection.
#include <algorithm>
#include <cerrno>

#include "engine/io_thread.hpp"
#include "engine/websocket/session.hpp"

namespace rivet::engine {

using http::ws::Opcode;

WebSocketSession::SendResult WebSocketSession::send(Opcode opcode, std::string_view payload) {
    if (state_ != State::Open) return SendResult::Dropped;
    return queue_frame(opcode, payload, true);
}

// A published message: its frame was made once for every subscriber. A compressed copy was made
// without our compressor's context, so ours must forget it too (the peer's decompressor keeps
// one window for both: our next message must not point into data it did not see from us).
WebSocketSession::SendResult WebSocketSession::send(const PreparedMessage& message) {
    if (state_ != State::Open) return SendResult::Dropped;
    const size_t waiting_before = buffered();
    const std::string* frame = &message.plain();
    if (deflater_) {
        const std::string& packed = message.compressed(
            deflate_->server_max_window_bits, config_.deflate_level, config_.deflate_min_size);
        if (!packed.empty()) {
            frame = &packed;
            deflater_->reset();
        }
    }
    out_.append(*frame);
    ++counters_.messages_out;
    counters_.bytes_out += message.payload_size();
    LoopStats::bump(owner_.stats().websocket_messages_out);
    LoopStats::bump(owner_.stats().websocket_bytes_out, message.payload_size());
    return after_queue(waiting_before);
}

WebSocketSession::SendResult WebSocketSession::queue_frame(Opcode opcode, std::string_view payload,
                                                           bool compress) {
    const bool data = !http::ws::is_control(opcode);
    const size_t waiting_before = buffered();
    if (data) {
        ++counters_.messages_out;
        counters_.bytes_out += payload.size();
        LoopStats::bump(owner_.stats().websocket_messages_out);
        LoopStats::bump(owner_.stats().websocket_bytes_out, payload.size());
    }
    bool rsv1 = false;
    if (compress && data && deflater_ && payload.size() >= config_.deflate_min_size) {
        scratch_.clear();
        if (deflater_->compress(payload, scratch_)) {
            payload = scratch_;
            rsv1 = true;
        }
    }
    char head[14];
    const size_t head_len = http::ws::write_frame_head(head, opcode, payload.size(), true, rsv1);
    Transport& transport = conn_.transport();
    if (!batching_ && buffered() == 0 && !transport.backlog()) {
        // Nothing waits: head and payload leave in one write, and only what the socket does
        // not take is copied.
        const std::string_view pieces[2] = {{head, head_len}, payload};
        ssize_t n = transport.write(pieces, false);
        if (n < 0 && errno != EAGAIN && errno != EINTR) {
            close_now();
            return SendResult::Dropped;
        }
        size_t sent = n > 0 ? size_t(n) : 0;
        LoopStats::bump(owner_.stats().bytes_out, sent);
        if (sent > 0) transport.write_progress_ms = owner_.loop().now_ms();
        if (sent < head_len) {
            out_.append(head + sent, head_len - sent);
            sent = 0;
        } else {
            sent -= head_len;
        }
        out_.append(payload.substr(std::min(sent, payload.size())));
        if (out_.empty()) return SendResult::Sent;
        transport.write_progress_ms = owner_.loop().now_ms();  // the clock starts now
        update_interest();
        arm_timer();
        return after_queue(waiting_before);
    }
    out_.append(head, head_len);
    out_.append(payload);
    return after_queue(waiting_before);
}

WebSocketSession::SendResult WebSocketSession::after_queue(size_t waiting_before) {
    // Too slow: output was still waiting when this message came, and the two together pass the
    // limit. A message alone may be as large as the application likes (one of max_message
    // echoed back needs the limit plus its frame head).
    if (waiting_before > 0 && buffered() > config_.send_limit) {
        // The client reads slower than it is sent to: its output stops here (uWebSockets'
        // closeOnBackpressureLimit); no close frame could reach it past the queue anyway.
        close_reason_ = "the client reads too slowly (send buffer limit)";
        sent_code_ = http::ws::close_code::kPolicyViolation;
        LoopStats::bump(owner_.stats().websocket_slow_closed);
        close_now();
        return SendResult::Dropped;
    }
    if (!batching_) flush();
    if (state_ == State::Closed) return SendResult::Dropped;
    if (buffered() > config_.send_high_water) {
        backpressured_ = true;
        return SendResult::Backpressure;
    }
    return SendResult::Sent;
}

void WebSocketSession::on_writable() {
    flush();
}

void WebSocketSession::flush() {
    if (state_ == State::Closed) return;
    Transport& transport = conn_.transport();
    if (transport.backlog() && !transport.flush_backlog() && errno != EAGAIN && errno != EINTR)
        return close_now();
    while (buffered() > 0 && !transport.backlog()) {
        ssize_t n = transport.write({out_.data() + out_sent_, buffered()});
        if (n < 0) {
            if (errno == EAGAIN || errno == EINTR) break;
            return close_now();
        }
        if (n == 0) break;
        LoopStats::bump(owner_.stats().bytes_out, uint64_t(n));
        transport.write_progress_ms = owner_.loop().now_ms();
        out_sent_ += size_t(n);
    }
    if (buffered() == 0) {
        out_.clear();
        out_sent_ = 0;
        if (out_.capacity() > 64 * 1024) std::string().swap(out_);  // an idle socket owns little
    } else if (out_sent_ > out_.size() / 2) {
        out_.erase(0, out_sent_);  // each byte moves at most once on average
        out_sent_ = 0;
    }
    after_flush();
}

void WebSocketSession::after_flush() {
    if (state_ == State::Closed) return;
    const bool all_out = buffered() == 0 && !conn_.transport().backlog();
    if (all_out && phase_ == Phase::Failing) {
        // Our close frame has left: our side of TCP ends first (RFC 6455 §7.1.1), and what the
        // peer still sends is dropped until its FIN.
        conn_.transport().shutdown_write();
        // Both close frames are exchanged once the peer's came: during a drain nothing is left
        // to wait for.
        if (peer_closed_ && owner_.draining()) return close_now();
        phase_ = Phase::Lingering;
        if (closing_since_ms_ == 0) closing_since_ms_ = owner_.loop().now_ms();
    }
    if (backpressured_ && buffered() <= config_.send_high_water / 2 && state_ == State::Open) {
        backpressured_ = false;
        {
            Batch batch(*this);
            handler_->on_drain(*this);
        }
        if (state_ == State::Closed) return;
        if (!batching_ && buffered() > 0) return flush();  // what on_drain sent
    }
    if (state_ == State::Closed) return;
    if (batching_) return;  // the batch's owner flushes again
    update_interest();
    arm_timer();
}

void WebSocketSession::update_interest() {
    uint8_t want = 0;
    if (phase_ != Phase::Failing) want |= net::kReadable;
    if (buffered() > 0 || conn_.transport().backlog()) want |= net::kWritable;
    conn_.set_interest(want);
}

}  // namespace rivet::engine
