// Http2Session: HTTP/2 (RFC 9113) on one connection, over its transport (engine/session.hpp).
// Chosen by ALPN "h2" after a TLS handshake, or handed the connection by Http1Session when a
// plain one starts with the preface (h2c by prior knowledge).
//
// libnghttp2 reads and writes the frames and runs HPACK, flow-control bookkeeping and the
// priority scheduler (RFC 9218 urgency and incremental, which browsers send). What is rivet's:
// each stream is an Http2Stream (an Exchange's Responder), request bodies are consumed only as
// they are buffered or taken by the handler (the window is the backpressure), the limits and
// timeouts, the abuse guards (frames that cost work and give nothing: GOAWAY ENHANCE_YOUR_CALM),
// and the lifecycle (GOAWAY at the lame duck, the drain and the idle timeout).
//
// Input is read into the loop's buffer and fed to nghttp2 whole; requests it completes are
// dispatched after the feed, outside nghttp2's callbacks. Output: nghttp2's frames are gathered
// into one buffer and written with one call per turn.
#pragma once

#include <nghttp2/nghttp2.h>

#include <cassert>
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "engine/connection.hpp"
#include "engine/http2/response_fields.hpp"
#include "engine/http2/stream.hpp"
#include "engine/loop_stats.hpp"
#include "engine/send_pace.hpp"
#include "engine/session.hpp"

namespace rivet::engine {

class IoThread;

class Http2Session final : public Session {
public:
    enum class Phase : uint8_t {
        Open,       // serving streams
        GoingAway,  // GOAWAY sent: the streams in flight finish, then the connection closes
        Closing,    // the last frames leave (a connection error, the idle timeout), then close
        Lingering,  // all sent and our side shut: input is dropped until EOF or the timeout
        Closed,
    };

    explicit Http2Session(Connection& connection);
    ~Http2Session() override;

    // Session.
    void start(std::string_view input) override;
    void on_readable() override;
    void on_writable() override { flush(); }
    void on_timeout() override;
    void on_closed() override;
    void close_when_idle() override;
    void complete(uint64_t sequence, Reply&& reply) override;
    bool admit_waiting_body() override;
    void kicked() override;
    void resume_stream(const StreamLink* link) override;

    // --- for its streams ---
    Connection& connection() { return conn_; }
    IoThread& owner() { return owner_; }
    nghttp2_session* ng() { return ng_; }
    // The loop thread's: a field list lives only until nghttp2 has copied it.
    static ResponseFields& response_fields();
    void count_request();
    // A graceful GOAWAY: the streams begun so far finish, then the connection closes (the lame
    // duck, the drain, an answer that ends its connection).
    void go_away();
    void wait_for_budget();
    void kick();

    // --- for the frame callbacks (session_frames.cpp) ---
    Http2Stream* stream(int32_t id) const;
    Http2Stream* open_stream(int32_t id);  // null: refused (over the stream limit)
    // A client's stream id below the highest it opened, never opened itself (RFC 9113 §5.1.1:
    // ids only grow) and not one of the streams closed lately (their late frames are nghttp2's
    // to answer).
    bool unknown_stream(int32_t id) const;
    void protocol_error();
    void stream_closed(int32_t id, uint32_t error_code);
    void mark_ready(Http2Stream& s) { ready_.push_back(s.id()); }
    // Answer bodies the streams hold (bytes, not files or producers) until the client's windows
    // let them go: they count with the unsent frames, against the body budget and against the
    // connection's output limit.
    void hold_answer(uint64_t bytes) { answers_held_ += bytes; }
    void release_answer(uint64_t bytes) {
        // Released more than held would wrap the count and hold every later request back.
        assert(bytes <= answers_held_);
        answers_held_ -= bytes;
    }
    // Past output_high_water, a complete request waits undispatched (held_back_) until the
    // client takes enough of what it was sent: HTTP/1.1's Paused, stream by stream. Reading
    // goes on (the client's WINDOW_UPDATEs are what frees the output).
    bool output_full() const;
    void hold_back(Http2Stream& s) { held_back_.push_back(s.id()); }
    // Abuse: GOAWAY ENHANCE_YOUR_CALM, counted by kind; the connection ends.
    void calm_down(Http2Abuse kind);
    bool frame_allowed(Http2Abuse kind);  // within the per-second bound of its kind
    void count_goaway(bool sent, uint32_t code);
    // The header block in progress (HEADERS and its CONTINUATIONs).
    struct HeaderBlock {
        uint32_t frames = 0;
        uint64_t bytes = 0;
    } block;
    Http2Stream* block_stream = nullptr;  // opened by the block in progress (if a request)

private:
    // Frames of one kind within the current second of this connection.
    struct Window {
        uint64_t second = 0;
        uint32_t count = 0;
    };

    void feed(const char* data, size_t len);
    void after_input();
    void flush();
    void after_flush();
    void begin_close();
    void linger_input();
    void arm_timer();
    void check_streams(uint64_t now);
    void reap();
    void close_now() { conn_.close_now(); }
    bool unsent() const { return out_sent_ < out_.size() || conn_.transport().backlog(); }
    uint64_t output_held() const { return out_.size() - out_sent_ + answers_held_; }
    void charge_output();       // the BodyBudget holds output_held() (output_charged_)
    void dispatch_held_back();  // in order, while the output has room

    Connection& conn_;
    IoThread& owner_;
    nghttp2_session* ng_ = nullptr;
    Phase phase_ = Phase::Open;
    std::vector<std::unique_ptr<Http2Stream>> streams_;  // open ones, any order (Stream::index)
    std::vector<int32_t> ids_;                           // their ids, in the same order
    std::vector<std::unique_ptr<Http2Stream>> retired_;  // closed during this turn
    std::vector<int32_t> ready_;                         // completed by the last input
    std::vector<int32_t> held_back_;  // complete requests waiting for the output to drain
    uint64_t answers_held_ = 0;       // hold_answer()
    std::string out_;                 // frames the socket did not take (empty while it keeps up)
    size_t out_sent_ = 0;
    uint64_t output_charged_ = 0;
    SendPace send_pace_;  // while output waits: how fast the client takes it
    Window windows_[kHttp2AbuseKinds] = {};
    // The kind of the last frame counted against a bound: what nghttp2's own flood check (its
    // queue of unsent PING and SETTINGS ACKs) is counted as. On a slow loop one read may hold
    // enough pings to fill that queue before our per-second bound is crossed.
    Http2Abuse last_limited_ = Http2Abuse::Settings;
    uint64_t last_active_ms_ = 0;
    uint32_t served_ = 0;
    int32_t highest_request_ = 0;  // the highest stream id a request opened
    int32_t recently_closed_[16] = {};
    uint32_t closed_count_ = 0;
    bool feeding_ = false;   // inside nghttp2_session_mem_recv
    bool flushing_ = false;  // inside flush(): a stream's answer is sent by the same loop
    bool flushing_inside_nghttp2_ = false;  // inside nghttp2_session_mem_send
    bool budget_wait_ = false;              // some stream waits for the body budget
    bool settings_sent_ = false;            // the first SETTINGS frame has left
};

}  // namespace rivet::engine
