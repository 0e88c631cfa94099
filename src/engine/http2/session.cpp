// Http2Session: the connection's lifecycle, input, output and timers. The frame callbacks are in
// session_frames.cpp.
#include "engine/http2/session.hpp"

#include <algorithm>
#include <cerrno>

#include "engine/io_thread.hpp"

namespace rivet::engine {

nghttp2_session* make_nghttp2_server(Http2Session& session);  // session_frames.cpp

namespace {

// Output gathered before it is written; and what one turn writes before it lets other
// connections go first (the rest follows from a kick).
constexpr size_t kGather = 64 * 1024;
constexpr size_t kWritePerTurn = 1024 * 1024;
constexpr int kReadsPerTurn = 8;
// nghttp2's own limit on streams open at once, past rivet's (see start()).
uint32_t nghttp2_stream_limit(uint32_t ours) {
    return ours * 2 + 16;
}

// The session's first frame is its SETTINGS: its MAX_CONCURRENT_STREAMS entry says `limit`.
void announce_stream_limit(std::string& frames, uint32_t limit) {
    constexpr size_t kHead = 9, kEntry = 6;
    if (frames.size() < kHead || uint8_t(frames[3]) != NGHTTP2_SETTINGS) return;
    const size_t length =
        (size_t(uint8_t(frames[0])) << 16) | (size_t(uint8_t(frames[1])) << 8) | uint8_t(frames[2]);
    for (size_t at = kHead; at + kEntry <= kHead + length && at + kEntry <= frames.size();
         at += kEntry) {
        const unsigned id = (unsigned(uint8_t(frames[at])) << 8) | uint8_t(frames[at + 1]);
        if (id != NGHTTP2_SETTINGS_MAX_CONCURRENT_STREAMS) continue;
        for (int i = 0; i < 4; ++i) frames[at + 2 + size_t(i)] = char(limit >> (24 - 8 * i));
    }
}

}  // namespace

Http2Session::Http2Session(Connection& connection)
    : conn_(connection), owner_(connection.owner()) {}

Http2Session::~Http2Session() {
    if (ng_) nghttp2_session_del(ng_);
    if (output_charged_) owner_.budget().charge_output(output_charged_, 0);
}

// Unsent frames and held answers count against the body budget as an HTTP/1.1 connection's
// output does.
void Http2Session::charge_output() {
    const uint64_t now = phase_ == Phase::Closed ? 0 : output_held();
    if (now == output_charged_) return;
    owner_.budget().charge_output(output_charged_, now);
    output_charged_ = now;
}

void Http2Session::start(std::string_view input) {
    ng_ = make_nghttp2_server(*this);
    const auto& h2 = owner_.config().http2;
    const nghttp2_settings_entry settings[] = {
        // nghttp2 (1.52) ends the whole connection when a client exceeds a limit it has
        // acknowledged; RFC 9113 §5.1.2 makes that a stream error, REFUSED_STREAM lets clients
        // retry it. So rivet enforces the limit (open_stream), and nghttp2 is given a higher
        // one: only a client that opens far more at once than it was told (twice the limit,
        // in one read) meets nghttp2's connection error. It stays finite because nghttp2 keeps
        // that many closed streams for the priority tree. The frame the client reads carries
        // rivet's limit (announce_stream_limit).
        {NGHTTP2_SETTINGS_MAX_CONCURRENT_STREAMS, nghttp2_stream_limit(h2.max_concurrent_streams)},
        {NGHTTP2_SETTINGS_INITIAL_WINDOW_SIZE, h2.stream_window},
        {NGHTTP2_SETTINGS_MAX_HEADER_LIST_SIZE, uint32_t(owner_.config().limits.max_header_bytes)},
        {NGHTTP2_SETTINGS_ENABLE_PUSH, 0},
    };
    nghttp2_submit_settings(ng_, NGHTTP2_FLAG_NONE, settings, std::size(settings));
    nghttp2_session_set_local_window_size(ng_, NGHTTP2_FLAG_NONE, 0, int32_t(h2.connection_window));
    LoopStats::bump(owner_.stats().http2_connections);
    last_active_ms_ = owner_.loop().now_ms();
    conn_.set_interest(net::kReadable);
    if (!input.empty()) {
        feed(input.data(), input.size());
        after_input();
        return flush();
    }
    on_readable();  // the first bytes are usually here already
}

void Http2Session::on_readable() {
    if (phase_ == Phase::Lingering) return linger_input();
    if (phase_ == Phase::Closed) return;
    Transport& transport = conn_.transport();
    char* buf = owner_.read_buffer();
    for (int i = 0; i < kReadsPerTurn && phase_ != Phase::Closed; ++i) {
        const ssize_t n = transport.read(buf, IoThread::kReadBufferSize);
        if (n == 0) return close_now();  // the client left: nothing it was owed can reach it
        if (n < 0) {
            if (errno == EAGAIN || errno == EINTR) break;
            return close_now();
        }
        last_active_ms_ = owner_.loop().now_ms();
        feed(buf, size_t(n));
        if (transport.drained() || phase_ == Phase::Closing) break;
        if (i + 1 == kReadsPerTurn) kick();  // more waits: after the other connections
    }
    transport.forget_drained();
    if (phase_ == Phase::Closed) return;
    if (transport.peer_closed()) return close_now();
    after_input();
    flush();
}

void Http2Session::feed(const char* data, size_t len) {
    if (phase_ == Phase::Closing || phase_ == Phase::Closed) return;
    feeding_ = true;
    const ssize_t rv = nghttp2_session_mem_recv(ng_, reinterpret_cast<const uint8_t*>(data), len);
    feeding_ = false;
    if (rv >= 0) return;
    // A connection error nghttp2 could not answer itself (a bad preface; a flood it caught):
    // it has a GOAWAY to send, or sends one now. Debian's fix of CVE-2024-28182 ends a header
    // block after 8 CONTINUATION frames before on_begin_frame sees the 9th: that flood is ours
    // to answer and count like the one on_begin_frame catches.
    uint32_t code = NGHTTP2_PROTOCOL_ERROR;
    if (rv == NGHTTP2_ERR_FLOODED) {
        code = NGHTTP2_ENHANCE_YOUR_CALM;
        LoopStats::bump(owner_.stats().http2_abuse[size_t(last_limited_)]);
    } else if (rv == NGHTTP2_ERR_TOO_MANY_CONTINUATIONS) {
        code = NGHTTP2_ENHANCE_YOUR_CALM;
        LoopStats::bump(owner_.stats().http2_abuse[size_t(Http2Abuse::Continuation)]);
    }
    nghttp2_session_terminate_session(ng_, code);
    phase_ = Phase::Closing;
}

// Requests completed by the input run now, outside nghttp2's callbacks: a handler may answer at
// once (submitting frames), defer, or ask for its body.
void Http2Session::after_input() {
    dispatch_held_back();  // before the requests that came after them
    // run_ready never marks more (only nghttp2's callbacks do): the list is stable meanwhile.
    for (size_t i = 0; i < ready_.size(); ++i)
        if (Http2Stream* s = stream(ready_[i])) s->run_ready();
    ready_.clear();
    reap();
}

ResponseFields& Http2Session::response_fields() {
    thread_local ResponseFields fields;
    return fields;
}

void Http2Session::count_request() {
    ++served_;
    LoopStats::bump(owner_.stats().requests);
}

void Http2Session::flush() {
    if (phase_ == Phase::Closed || phase_ == Phase::Lingering || flushing_) return;
    flushing_ = true;
    struct Done {
        bool& flag;
        ~Done() { flag = false; }
    } done{flushing_};
    // The lame duck, or the connection has made its requests: no new streams, the rest finish.
    const auto& limits = owner_.config().limits;
    if (phase_ == Phase::Open &&
        (owner_.winding_down() ||
         (limits.max_requests_per_connection && served_ >= limits.max_requests_per_connection)))
        go_away();
    Transport& transport = conn_.transport();
    if (transport.backlog() && !transport.flush_backlog() && errno != EAGAIN && errno != EINTR)
        return close_now();
    // Frames are gathered in the loop's shared buffer and written from there; only what the
    // socket does not take is copied into the connection's own (an idle one keeps none).
    std::string& gather = owner_.write_buffer();
    size_t written = 0;
    while (!transport.backlog()) {
        if (out_sent_ < out_.size()) {
            const ssize_t n = transport.write({out_.data() + out_sent_, out_.size() - out_sent_});
            if (n < 0) {
                if (errno == EAGAIN || errno == EINTR) break;
                return close_now();
            }
            LoopStats::bump(owner_.stats().bytes_out, uint64_t(n));
            if (n > 0) transport.write_progress_ms = owner_.loop().now_ms();
            out_sent_ += size_t(n);
            written += size_t(n);
            if (out_sent_ < out_.size()) break;  // the socket is full: on_writable goes on
            std::string().swap(out_);
            out_sent_ = 0;
            continue;
        }
        while (gather.size() < kGather) {
            const uint8_t* frames = nullptr;
            flushing_inside_nghttp2_ = true;
            const ssize_t n = nghttp2_session_mem_send(ng_, &frames);
            flushing_inside_nghttp2_ = false;
            if (n < 0) {
                gather.clear();
                return close_now();
            }
            if (n == 0) break;
            gather.append(reinterpret_cast<const char*>(frames), size_t(n));
        }
        if (gather.empty()) break;
        if (!settings_sent_) {
            settings_sent_ = true;
            announce_stream_limit(gather, owner_.config().http2.max_concurrent_streams);
        }
        ssize_t n = transport.write(gather);
        if (n < 0 && errno != EAGAIN && errno != EINTR) {
            gather.clear();
            return close_now();
        }
        const size_t sent = n > 0 ? size_t(n) : 0;
        LoopStats::bump(owner_.stats().bytes_out, sent);
        // Fresh output starts the write clock even if none of it could leave yet.
        transport.write_progress_ms = owner_.loop().now_ms();
        written += sent;
        if (sent < gather.size()) {
            out_.assign(gather, sent);
            out_sent_ = 0;
            gather.clear();
            break;
        }
        gather.clear();
        if (written >= kWritePerTurn) {
            kick();  // one large answer does not hold the loop
            break;
        }
    }
    reap();
    // What the client took made room for requests held back: they run after the other
    // connections' turn, as more input would.
    if (!held_back_.empty() && !output_full()) kick();
    after_flush();
}

bool Http2Session::output_full() const {
    return output_held() > owner_.config().limits.output_high_water;
}

void Http2Session::dispatch_held_back() {
    if (held_back_.empty() || output_full()) return;
    std::vector<int32_t> waiting;
    waiting.swap(held_back_);
    // A stream that finds the output full again goes back to held_back_, in the same order.
    for (int32_t id : waiting)
        if (Http2Stream* s = stream(id)) s->run_ready();
}

void Http2Session::after_flush() {
    if (phase_ == Phase::Closed) return;
    charge_output();
    const bool pending_frames = nghttp2_session_want_write(ng_) != 0;
    if (!unsent() && !pending_frames) {
        // nghttp2 is done with the connection (a GOAWAY either way and no stream left), or
        // we went away and the last stream is done.
        const bool finished =
            !nghttp2_session_want_read(ng_) || (phase_ != Phase::Open && streams_.empty());
        if (finished || phase_ == Phase::Closing) return begin_close();
    }
    // Reading stops while the socket does not take our output: a client that sends requests
    // without reading the answers opens no more streams (each would hold its answer here), and
    // the write timeout bounds the wait.
    const bool read = !unsent();
    if (read)
        send_pace_.idle();
    else
        send_pace_.waiting(owner_.loop().now_ms(), conn_.transport());
    conn_.set_interest(
        uint8_t((read ? uint8_t(net::kReadable) : 0) | (unsent() ? uint8_t(net::kWritable) : 0)));
    arm_timer();
}

void Http2Session::complete(uint64_t sequence, Reply&& reply) {
    if (phase_ == Phase::Closed) return;
    if (Http2Stream* s = stream(int32_t(sequence))) s->complete(std::move(reply));
    flush();
}

void Http2Session::wait_for_budget() {
    if (budget_wait_) return;
    budget_wait_ = true;
    owner_.wait_for_budget(conn_);
}

bool Http2Session::admit_waiting_body() {
    if (!budget_wait_ || phase_ == Phase::Closed) return true;
    bool all = true;
    for (const auto& s : streams_)
        if (s->input() == Http2Stream::Input::BodyWait && !s->admit_body()) all = false;
    budget_wait_ = !all;
    after_input();
    flush();
    return all;
}

void Http2Session::kick() {
    owner_.kick(conn_);
}

void Http2Session::kicked() {
    if (phase_ == Phase::Closed) return;
    if (phase_ == Phase::Lingering) return linger_input();
    for (size_t i = 0; i < streams_.size(); ++i) streams_[i]->deliver_upload();
    if (conn_.transport().input_pending()) return on_readable();
    after_input();
    flush();
}

void Http2Session::resume_stream(const StreamLink* link) {
    if (phase_ == Phase::Closed) return;
    for (const auto& s : streams_)
        if (s->resume(link)) break;
    flush();
}

// A scan of the open streams' ids (a few, at most max_concurrent_streams, side by side in
// memory) costs less than a lookup in nghttp2's map, which misses the cache.
Http2Stream* Http2Session::stream(int32_t id) const {
    for (size_t i = 0; i < ids_.size(); ++i)
        if (ids_[i] == id) return streams_[i].get();
    return nullptr;
}

bool Http2Session::unknown_stream(int32_t id) const {
    if (id > highest_request_ || stream(id)) return false;
    for (int32_t closed : recently_closed_)
        if (closed == id) return false;
    return true;
}

Http2Stream* Http2Session::open_stream(int32_t id) {
    highest_request_ = std::max(highest_request_, id);
    if (streams_.size() >= owner_.config().http2.max_concurrent_streams) {
        // Over the limit announced: refused, so the client may retry it; its header block is
        // still decoded by nghttp2 (HPACK's state), and dropped.
        nghttp2_submit_rst_stream(ng_, NGHTTP2_FLAG_NONE, id, NGHTTP2_REFUSED_STREAM);
        recently_closed_[closed_count_++ % std::size(recently_closed_)] = id;
        return nullptr;
    }
    auto s = Http2Stream::make(*this, id);
    s->index = streams_.size();
    s->progress_ms = owner_.loop().now_ms();
    streams_.push_back(std::move(s));
    ids_.push_back(id);
    LoopStats::bump(owner_.stats().http2_streams);
    return streams_.back().get();
}

// nghttp2 is done with the stream (inside its callbacks): it leaves the list now and is told,
// and freed, at the end of the turn (reap), outside them.
void Http2Session::stream_closed(int32_t id, uint32_t error_code) {
    Http2Stream* s = stream(id);
    if (!s) return;
    if (block_stream == s) block_stream = nullptr;
    const size_t i = s->index;
    std::unique_ptr<Http2Stream> owned = std::move(streams_[i]);
    if (i + 1 < streams_.size()) {
        streams_[i] = std::move(streams_.back());
        streams_[i]->index = i;
        ids_[i] = ids_.back();
    }
    streams_.pop_back();
    ids_.pop_back();
    owned->close_code = error_code;
    recently_closed_[closed_count_++ % std::size(recently_closed_)] = id;
    LoopStats::bump(owner_.stats().http2_streams_closed);
    retired_.push_back(std::move(owned));
}

void Http2Session::reap() {
    if (feeding_ || flushing_inside_nghttp2_) return;
    // closed() retires no other stream: the list is stable meanwhile.
    for (auto& s : retired_) {
        s->closed(s->close_code);
        Http2Stream::recycle(std::move(s));
    }
    retired_.clear();
}

}  // namespace rivet::engine
