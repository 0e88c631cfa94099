// WebSocketSession, the input side: reading frames, answering control frames, the close
// handshake, timers.
#include "engine/websocket/session.hpp"

#include <algorithm>
#include <cerrno>
#include <cstring>

#include "engine/io_thread.hpp"

namespace rivet::engine {

using http::ws::Opcode;
namespace code = http::ws::close_code;

namespace {

http::ws::Reader make_reader(const WebSocketConfig& c, http::ws::Inflater* inflater) {
    return http::ws::Reader(c.limits, inflater);
}

std::unique_ptr<http::ws::Inflater> make_inflater(const std::optional<http::ws::DeflateParams>& d) {
    if (!d) return nullptr;
    return std::make_unique<http::ws::Inflater>(d->client_max_window_bits,
                                                d->client_no_context_takeover);
}

}  // namespace

WebSocketSession::WebSocketSession(Connection& connection, const WebSocketConfig& config,
                                   std::optional<http::ws::DeflateParams> deflate,
                                   std::unique_ptr<WebSocketHandler> handler)
    : conn_(connection),
      owner_(connection.owner()),
      config_(config),
      deflate_(deflate),
      handler_(std::move(handler)),
      inflater_(make_inflater(deflate)),
      reader_(make_reader(config_, inflater_.get())) {
    if (deflate_)
        deflater_ = std::make_unique<http::ws::Deflater>(config_.deflate_level,
                                                         deflate_->server_max_window_bits,
                                                         deflate_->server_no_context_takeover);
}

WebSocketSession::~WebSocketSession() = default;

void WebSocketSession::start(std::string_view input) {
    LoopStats::bump(owner_.stats().websockets_open);
    last_in_ms_ = owner_.loop().now_ms();
    {
        Batch batch(*this);
        handler_->on_open(*this);
        // Frames the client sent right behind its handshake (the read that took the request
        // took them too): read in pieces through the loop's buffer, which the reader may unmask.
        while (!input.empty() && state_ != State::Closed && !reading_stopped()) {
            const size_t n = std::min(input.size(), IoThread::kReadBufferSize);
            std::memcpy(owner_.read_buffer(), input.data(), n);
            input.remove_prefix(n);
            read_input(owner_.read_buffer(), n);
        }
    }
    if (state_ == State::Closed) return;
    flush();
}

void WebSocketSession::on_readable() {
    if (state_ == State::Closed) return;
    Transport& transport = conn_.transport();
    if (phase_ == Phase::Lingering) {
        if (!transport.discard_input()) close_now();
        return;
    }
    {
        Batch batch(*this);
        // One read per readiness event (the loop is level-triggered: more input comes back
        // next turn, after the other connections had theirs); TLS may hold more plaintext
        // than a read returns, which no readiness event will announce.
        do {
            char* buf = owner_.read_buffer();
            ssize_t n = transport.read(buf, IoThread::kReadBufferSize);
            if (n < 0) {
                if (errno == EAGAIN || errno == EINTR) break;
                return close_now();
            }
            if (n == 0) {  // the peer's end without a close frame (1006), or after it
                if (!peer_closed_) close_reason_ = "the client closed without a close frame";
                return close_now();
            }
            last_in_ms_ = owner_.loop().now_ms();
            ping_sent_ = false;
            read_input(buf, size_t(n));
        } while (state_ != State::Closed && !reading_stopped() && transport.input_pending());
    }
    if (state_ == State::Closed) return;
    if (transport.peer_closed() && !peer_closed_) return close_now();
    flush();
}

void WebSocketSession::read_input(char* data, size_t len) {
    size_t used = 0;
    auto status = reader_.feed(data, len, *this, used);
    if (status == http::ws::Reader::Status::Refused) refuse(reader_.violation());
}

// The client broke the protocol: our close frame with the code says why, then the connection
// ends without waiting for the client's (RFC 6455 §7.1.7, "Fail the WebSocket Connection").
void WebSocketSession::refuse(const http::ws::Violation& v) {
    if (state_ == State::Closed) return;
    if (state_ == State::Open) {
        begin_closing(v.code, v.reason);
        LoopStats::bump(owner_.stats().websocket_violations);
    }
    phase_ = Phase::Failing;
}

bool WebSocketSession::on_message(Opcode opcode, std::string_view payload) {
    if (state_ != State::Open) return state_ != State::Closed;  // after our close: dropped
    ++counters_.messages_in;
    counters_.bytes_in += payload.size();
    LoopStats::bump(owner_.stats().websocket_messages_in);
    handler_->on_message(*this, opcode, payload);
    return state_ == State::Open || state_ == State::Closing;
}

bool WebSocketSession::on_ping(std::string_view payload) {
    if (state_ == State::Open) queue_frame(Opcode::Pong, payload, false);
    return state_ != State::Closed;
}

bool WebSocketSession::on_pong(std::string_view) {
    ping_sent_ = false;
    return state_ != State::Closed;
}

// The peer's close frame: answered with ours (its code echoed, §5.5.1) unless we sent one
// already; the TCP connection then ends from our side once the frame has left.
bool WebSocketSession::on_close(uint16_t peer_code, std::string_view reason) {
    peer_closed_ = true;
    close_code_ = peer_code;
    close_reason_.assign(reason);
    if (state_ == State::Open) {
        state_ = State::Closing;
        closing_since_ms_ = owner_.loop().now_ms();
        const size_t before = out_.size();
        if (peer_code == code::kNoStatus)
            http::ws::append_frame(out_, Opcode::Close, {});
        else
            http::ws::append_close_frame(out_, peer_code, {});
        counters_.bytes_out += out_.size() - before;
    }
    phase_ = Phase::Failing;  // nothing more is read as frames: close once the output is out
    return false;
}

void WebSocketSession::close(uint16_t close_code, std::string_view reason) {
    if (state_ != State::Open) return;
    begin_closing(close_code, reason);
    if (!batching_) flush();
}

void WebSocketSession::begin_closing(uint16_t close_code, std::string_view reason) {
    state_ = State::Closing;
    closing_since_ms_ = owner_.loop().now_ms();
    sent_code_ = close_code;
    if (close_reason_.empty()) close_reason_.assign(reason);
    const size_t before = out_.size();
    http::ws::append_close_frame(out_, close_code, reason);
    counters_.bytes_out += out_.size() - before;
}

void WebSocketSession::close_when_idle() {
    if (phase_ == Phase::Lingering && peer_closed_) return close_now();  // nothing owed
    if (state_ != State::Open) return;
    close(code::kGoingAway, "the server is shutting down");
}

void WebSocketSession::on_timeout() {
    if (state_ == State::Closed) return;
    const uint64_t now = owner_.loop().now_ms();
    if (state_ == State::Closing || phase_ != Phase::Reading) {
        if (now >= closing_since_ms_ + config_.close_ms) return close_now();
    }
    if (buffered() > 0 || conn_.transport().backlog()) {
        const uint64_t write_ms = owner_.config().timeouts.write_ms;
        if (now >= conn_.transport().write_progress_ms + write_ms) {
            close_reason_ = "the client stopped reading";
            return close_now();
        }
    }
    if (state_ == State::Open && config_.idle_ms && now >= last_in_ms_ + config_.idle_ms) {
        close(code::kGoingAway, "idle timeout");
    } else if (state_ == State::Open && config_.ping_ms && !ping_sent_ &&
               now >= last_in_ms_ + config_.ping_ms) {
        ping_sent_ = true;
        queue_frame(Opcode::Ping, {}, false);
        flush();
        return;
    }
    arm_timer();
}

void WebSocketSession::arm_timer() {
    if (state_ == State::Closed) return;
    const uint64_t now = owner_.loop().now_ms();
    uint64_t due = UINT64_MAX;
    if (state_ == State::Closing || phase_ != Phase::Reading)
        due = std::min(due, closing_since_ms_ + config_.close_ms);
    if (buffered() > 0 || conn_.transport().backlog())
        due =
            std::min(due, conn_.transport().write_progress_ms + owner_.config().timeouts.write_ms);
    if (state_ == State::Open) {
        if (config_.idle_ms) due = std::min(due, last_in_ms_ + config_.idle_ms);
        if (config_.ping_ms && !ping_sent_) due = std::min(due, last_in_ms_ + config_.ping_ms);
    }
    if (due == UINT64_MAX) return conn_.cancel_timer();
    conn_.schedule(due > now ? due - now : 0);
}

void WebSocketSession::on_closed() {
    if (state_ == State::Closed) return;
    state_ = State::Closed;
    LoopStats::bump(owner_.stats().websockets_closed);
    if (!peer_closed_ && sent_code_ != 0) close_code_ = sent_code_;
    handler_->on_close(*this, close_code_, close_reason_);
}

void WebSocketSession::close_now() {
    if (state_ == State::Closed) return;
    conn_.close_now();  // calls on_closed()
}

}  // namespace rivet::engine
