// Http2Session, the connection's life: GOAWAYs (graceful, abuse, protocol errors), the
// timers of streams and of the connection, closing and the drain.
#include <algorithm>

#include "engine/http2/session.hpp"
#include "engine/io_thread.hpp"
#include "net/socket.hpp"

namespace rivet::engine {

namespace {

// How often a connection with streams in flight looks at their clocks.
constexpr uint64_t kStreamCheckMs = 1000;

}  // namespace

void Http2Session::go_away() {
    if (phase_ != Phase::Open) return;
    phase_ = Phase::GoingAway;
    nghttp2_submit_goaway(ng_, NGHTTP2_FLAG_NONE, nghttp2_session_get_last_proc_stream_id(ng_),
                          NGHTTP2_NO_ERROR, nullptr, 0);
}

void Http2Session::calm_down(Http2Abuse kind) {
    if (phase_ == Phase::Closing || phase_ == Phase::Closed) return;
    LoopStats::bump(owner_.stats().http2_abuse[size_t(kind)]);
    nghttp2_session_terminate_session(ng_, NGHTTP2_ENHANCE_YOUR_CALM);
    phase_ = Phase::Closing;
}

void Http2Session::protocol_error() {
    if (phase_ == Phase::Closing || phase_ == Phase::Closed) return;
    nghttp2_session_terminate_session(ng_, NGHTTP2_PROTOCOL_ERROR);
    phase_ = Phase::Closing;
}

bool Http2Session::frame_allowed(Http2Abuse kind) {
    const auto& h2 = owner_.config().http2;
    Window& w = windows_[size_t(kind)];
    const uint64_t second = owner_.loop().now_ms() / 1000;
    if (w.second != second) w = {second, 0};
    last_limited_ = kind;
    const uint32_t limit =
        kind == Http2Abuse::RapidReset ? h2.max_resets_per_s : h2.max_control_frames_per_s;
    return ++w.count <= limit;
}

void Http2Session::count_goaway(bool sent, uint32_t code) {
    auto& counters =
        sent ? owner_.stats().http2_goaways_sent : owner_.stats().http2_goaways_received;
    LoopStats::bump(counters[http2_error_kind(code)]);
}

// Nothing more to send: our side shuts, and input is read and dropped until the client closes
// (or the linger timeout), so that a client still sending does not turn our last frames into a
// reset.
void Http2Session::begin_close() {
    phase_ = Phase::Lingering;
    conn_.transport().shutdown_write();
    conn_.set_interest(net::kReadable);
    conn_.schedule(owner_.config().timeouts.linger_ms);
}

void Http2Session::linger_input() {
    if (!conn_.transport().discard_input()) close_now();
}

void Http2Session::arm_timer() {
    const auto& t = owner_.config().timeouts;
    const uint64_t now = owner_.loop().now_ms();
    if (!streams_.empty() || unsent()) return conn_.schedule(std::min(kStreamCheckMs, t.write_ms));
    const uint64_t deadline = last_active_ms_ + t.idle_ms;
    conn_.schedule(deadline > now ? deadline - now : 0);
}

void Http2Session::on_timeout() {
    if (phase_ == Phase::Lingering) return close_now();
    const auto& t = owner_.config().timeouts;
    const uint64_t now = owner_.loop().now_ms();
    Transport& transport = conn_.transport();
    // A client that does not read what it is sent, or takes it too slowly (SendPace).
    if (unsent() && now >= send_pace_.window_end_ms(t.write_ms) &&
        send_pace_.judge(now, transport, owner_.config().limits.min_send_rate, t.write_ms) ==
            SendPace::Verdict::TooSlow) {
        net::reset_on_close(conn_.fd());
        return close_now();
    }
    if (streams_.empty() && !unsent() && now - last_active_ms_ >= t.idle_ms) {
        // Idle: a GOAWAY says no stream was lost, then the connection ends.
        go_away();
        phase_ = Phase::Closing;
    } else {
        check_streams(now);
    }
    flush();
}

// Streams that stopped moving: a request whose headers or body stall past their timeout, an
// answer that waits on a window the client holds at zero past the write timeout.
void Http2Session::check_streams(uint64_t now) {
    const auto& t = owner_.config().timeouts;
    for (const auto& s : streams_) {
        const uint64_t quiet = now - s->progress_ms;
        bool stalled = false;
        if (s->input() == Http2Stream::Input::Headers)
            stalled = quiet >= t.header_ms;
        else if (s->input() != Http2Stream::Input::Complete &&
                 s->output() != Http2Stream::Output::Sending) {
            stalled = quiet >= t.body_ms;
            if (s->refuses_body(now, stalled)) continue;  // answered, reset once it has left
        } else if (s->output() == Http2Stream::Output::Sending && !s->body_waiting_for_producer() &&
                   quiet >= t.write_ms) {
            // Held back by the client's window (a socket that does not drain is the
            // connection's write timeout, above; a stream behind others is not stalled).
            stalled = nghttp2_session_get_stream_remote_window_size(ng_, s->id()) <= 0 ||
                      nghttp2_session_get_remote_window_size(ng_) <= 0;
            if (stalled) LoopStats::bump(owner_.stats().http2_stalls);
        }
        if (stalled) nghttp2_submit_rst_stream(ng_, NGHTTP2_FLAG_NONE, s->id(), NGHTTP2_CANCEL);
    }
}

void Http2Session::on_closed() {
    phase_ = Phase::Closed;
    charge_output();  // gives the output's share of the budget back
    // Whoever waits on a stream (a Deferred, a body, a producer's wakers) learns it now.
    std::vector<std::unique_ptr<Http2Stream>> streams;
    streams.swap(streams_);
    ids_.clear();
    for (auto& s : streams) s->closed(NGHTTP2_CANCEL);
    LoopStats::bump(owner_.stats().http2_streams_closed, streams.size());
    for (auto& s : retired_) s->closed(s->close_code);
    retired_.clear();
}

void Http2Session::close_when_idle() {
    if (phase_ == Phase::Closed || phase_ == Phase::Lingering) return;
    go_away();
    // Bodies that wait for a producer end now: nothing else would end them in the drain.
    for (const auto& s : streams_) s->end_waiting_body();
    flush();
}

}  // namespace rivet::engine
