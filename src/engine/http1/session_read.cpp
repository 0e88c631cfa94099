// Http1Session, the reading side: from bytes on the transport to requests handed to the
// application.
#include "engine/http1/session.hpp"

#include <cerrno>
#include <cstring>

#include "engine/http2/session.hpp"
#include "engine/io_thread.hpp"
#include "http/http2/request_head.hpp"

namespace rivet::engine {

Http1Session::Http1Session(Connection& connection) : conn_(connection), owner_(connection.owner()) {
    // A fresh connection owes us a request head from now: the accept, the PROXY header or the
    // handshake had their own clocks.
    head_started_ms_ = owner_.loop().now_ms();
}

Http1Session::~Http1Session() {
    // A session handed off or destroyed without on_closed() gives its output's share back too.
    if (output_charged_) owner_.budget().charge_output(output_charged_, 0);
}

void Http1Session::start(std::string_view input) {
    // The header clock runs from now, whatever arrives (a silent client is closed by it).
    update_interest();
    arm_timer();
    // A fresh connection's first bytes are usually in the socket already (TCP_DEFER_ACCEPT):
    // read them now. Bytes handed over were read already, and no event will announce them.
    if (input.empty()) return on_readable();
    in_.assign(input);
    serve_buffered();
}

void Http1Session::refuse(int status, const char* reason) {
    discarded_input_ = true;  // the request is not read: the close lingers
    fail(status, reason);
    flush();
}

bool Http1Session::idle() const {
    return !input_waiting() && !unsent() && !owes();
}

void Http1Session::on_closed() {
    phase_ = Phase::Closed;
    charge_output();  // gives the output's share of the budget back
    drop_upload("the connection closed");
    body_.reset();                                    // gives back its share of the body budget now
    if (pending_ && pending_->stream) drop_stream();  // its wakers and owner learn it now
    cancel_deferred();
}

Http1Session::BodyInProgress::BodyInProgress(const http::RequestHead& h, size_t bytes,
                                             BodyReader&& r)
    : head(h), fields(h.headers.begin(), h.headers.end()), head_bytes(bytes), reader(std::move(r)) {
    head.headers = fields;
}

Http1Session::BodyInProgress::~BodyInProgress() {
    if (budget) budget->give_back(wanted);
}

void Http1Session::BodyInProgress::rebase(const char* from, size_t len, const char* to) {
    rebase_head(head, fields, from, len, to);
}

// ---- reading ----

void Http1Session::on_readable() {
    if (phase_ == Phase::Lingering) return drop_input();
    if (stream_waiting() && (phase_ == Phase::Paused || phase_ == Phase::Closing))
        return watch_peer_while_waiting();
    if (phase_ == Phase::Stream && (!upload_->waiting || !in_.empty())) {
        // Nobody asks for the body (the socket waits), or a piece is still buffered.
        return kicked();
    }
    if (phase_ != Phase::Head && phase_ != Phase::Body && phase_ != Phase::Stream) return;
    // What the read below learns about the socket holds only until this call returns.
    Transport& transport = conn_.transport();
    struct Forget {
        Transport& t;
        ~Forget() { t.forget_drained(); }
    } forget{transport};

    // A short unfinished head moves back into the shared buffer and the read lands behind it,
    // so the common case (a request split across two reads) costs one small copy and leaves the
    // connection without a buffer of its own. A body in progress, or a long head, grows in_.
    const size_t have = in_.size();
    const bool shared = phase_ != Phase::Body && have <= kTailToShared;
    char* buf;
    size_t room;
    if (shared) {
        buf = owner_.read_buffer();
        room = IoThread::kReadBufferSize - have;
        if (have > 0) {
            std::memcpy(buf, in_.data(), have);
            std::string().swap(in_);
        }
    } else {
        const char* before = in_.data();
        in_.resize(have + IoThread::kReadBufferSize);
        if (body_ && in_.data() != before) body_->rebase(before, have, in_.data());
        buf = in_.data();
        room = IoThread::kReadBufferSize;
    }
    ssize_t n = transport.read(buf + have, room);
    if (!shared)
        in_.resize(have + size_t(n > 0 ? n : 0));
    else if (n <= 0 && have > 0)
        in_.assign(buf, have);  // nothing new: keep what we had
    if (n < 0) {
        if (errno != EAGAIN && errno != EINTR) close_now();
        return;
    }
    if (phase_ == Phase::Closed) return;
    if (n == 0) return on_peer_eof();
    pace_.add(uint64_t(n));  // counts only while a body is judged (Body, Stream)

    const size_t total = have + size_t(n);
    const size_t used = serve_input(buf, total);
    if (phase_ == Phase::Closed) return;
    // A new head's clock starts with its first byte; a fresh connection's runs from the accept,
    // so that one idle connection cannot wait twice as long.
    keep_unused(buf, used, total, used > 0 || (have == 0 && conn_.requests_served() > 0));
    flush();
    // A TLS close_notify read with the bytes is not announced again.
    if (phase_ != Phase::Closed && transport.peer_closed()) on_peer_eof();
}

void Http1Session::on_peer_eof() {
    // The client sent all it will; answer what it asked, then close.
    peer_eof_ = true;
    // Half a request can never be finished now: unless answers are owed, close at once.
    if (!unsent() && !owes()) return close_now();
    // An answer still being worked on (a Deferred) is abandoned, as nginx treats a client's EOF
    // while its request waits (499): the client went away, so the work stops. What is already
    // answered would be lost with it, which a client that half-closes risks only while a
    // handler waits; answers made at once still reach it (they are sent before the EOF is read).
    if (awaits_deferred()) return close_now();
    end_reading();
    std::string().swap(in_);
    update_interest();
}

// Serves what `data` holds: the rest of the body in progress, then every complete request after
// it. Returns the bytes used; the rest is an unfinished request (or input that will not be read).
size_t Http1Session::serve_input(const char* data, size_t len) {
    struct Serving {
        bool& flag;
        bool before;
        ~Serving() { flag = before; }
    } serving{serving_, serving_};
    serving_ = true;
    size_t pos = 0;
    if (phase_ == Phase::Body)
        pos = finish_body(data, len);
    else if (phase_ == Phase::Stream)
        pos = feed_upload(data, len);
    // One head for the whole batch: the parser assigns every field a complete head has (what
    // it may leave unset, it clears), and no request keeps its head past its dispatch, so the
    // 100 bytes are not cleared for each pipelined request.
    http::RequestHead head;
    while (pos < len && phase_ == Phase::Head) {
        // h2c by prior knowledge: a connection's first bytes are HTTP/2's preface.
        if (conn_.requests_served() == 0 && pos == 0 && data[0] == 'P' &&
            owner_.config().http2.enabled && begins_http2({data, len}))
            break;
        if (should_pause()) {
            phase_ = Phase::Paused;  // after_flush resumes with what is left in in_
            break;
        }
        auto r = http::parse_request_head({data + pos, len - pos}, head, owner_.header_storage(),
                                          owner_.parser_limits(), &head_scan_);
        if (r.kind == http::ParseResult::Incomplete) break;
        head_scan_ = {};
        if (r.kind == http::ParseResult::Error) {
            fail(r.status, r.reason);
            break;
        }
        const size_t hb = r.head_bytes;
        BodyPlan plan{owner_.config().limits.max_body, BodyPlan::Mode::Buffered};
        owner_.app().plan_body(head, plan);
        if (head.framing == http::BodyFraming::ContentLength && head.content_length > plan.limit) {
            fail(413, "content too large", &head);  // before reading any of it
            break;
        }
        if (plan.mode == BodyPlan::Mode::Streamed) {
            start_upload(head, {data + pos, hb}, plan);
            pos += hb;
            if (phase_ == Phase::Stream) pos += feed_upload(data + pos, len - pos);
            continue;
        }
        if (head.framing == http::BodyFraming::None) {
            pos += hb;
            input_follows_ = pos < len || !conn_.transport().drained();
            dispatch(head, {});
            continue;
        }
        BodyReader reader(head, plan.limit);
        auto status = reader.read({data + pos + hb, len - pos - hb});
        if (status == BodyReader::Status::Error) {
            fail(reader.error_status(), reader.error_reason(), &head);
            break;
        }
        if (status == BodyReader::Status::NeedMore) {
            begin_body(head, hb, std::move(reader), plan);  // the head stays where it is, at pos
            break;
        }
        pos += hb + reader.consumed();
        input_follows_ = pos < len || !conn_.transport().drained();
        dispatch(head, reader.body());
    }
    return pos;
}

void Http1Session::begin_body(const http::RequestHead& head, size_t head_bytes, BodyReader&& reader,
                              const BodyPlan& plan) {
    body_ = std::make_unique<BodyInProgress>(head, head_bytes, std::move(reader));
    body_->wanted =
        head.framing == http::BodyFraming::ContentLength ? head.content_length : plan.limit;
    const uint64_t now = owner_.loop().now_ms();
    if (reserve_body()) {
        phase_ = Phase::Body;
        pace_.start(now);
    } else {
        phase_ = Phase::BodyWait;  // no 100 Continue yet: the client may as well wait
        body_->wait_since_ms = now;
        owner_.wait_for_budget(conn_);
    }
    if (!head.expect_continue) return;
    // An interim answer must not overtake the answers before it.
    if (owes() || phase_ == Phase::BodyWait)
        body_->continue_owed = true;
    else
        send_continue();
}

bool Http1Session::reserve_body() {
    if (!owner_.budget().try_take(body_->wanted)) return false;
    body_->budget = &owner_.budget();
    return true;
}

bool Http1Session::admit_waiting_body() {
    if (phase_ != Phase::BodyWait) return true;  // closed, or no longer waiting
    if (!reserve_body()) return false;
    phase_ = Phase::Body;
    pace_.start(owner_.loop().now_ms());  // the wait was the server's: the pace starts now
    flush();  // after_flush: the owed 100 Continue, reading, the body timer
    return true;
}

// Phase::Body: `data` starts with the waiting head. Returns the bytes of the finished request,
// or 0 while its body is still incomplete.
size_t Http1Session::finish_body(const char* data, size_t len) {
    const size_t hb = body_->head_bytes;
    auto status = body_->reader.read({data + hb, len - hb});
    if (status == BodyReader::Status::NeedMore) return 0;
    // The head leaves body_ before the application sees it: an answer that ends reading (and so
    // drops a body in progress) must not free the head it is answering.
    std::unique_ptr<BodyInProgress> done = std::move(body_);
    phase_ = Phase::Head;
    if (status == BodyReader::Status::Error) {
        fail(done->reader.error_status(), done->reader.error_reason(), &done->head);
        return 0;
    }
    input_follows_ = hb + done->reader.consumed() < len || !conn_.transport().drained();
    dispatch(done->head, done->reader.body());
    return hb + done->reader.consumed();
}

// Keeps the bytes serve_input() did not use, in in_ (which `data` may already be).
void Http1Session::keep_unused(const char* data, size_t used, size_t len, bool head_restarts) {
    const bool own = data == in_.data();
    if (phase_ == Phase::Closing || phase_ == Phase::Lingering) {
        if (used < len) discarded_input_ = true;
        std::string().swap(in_);
        return;
    }
    if (used == len) {
        std::string().swap(in_);  // an idle connection keeps no buffer
        return;
    }
    if (!own) {
        in_.assign(data + used, len - used);
    } else if (used > 0) {
        in_.erase(0, used);
    }
    if (body_ && (!own || used > 0)) body_->rebase(data + used, len - used, in_.data());
    if (head_restarts && phase_ == Phase::Head) head_started_ms_ = owner_.loop().now_ms();
}

void Http1Session::dispatch(const http::RequestHead& head, std::string_view body,
                            BodyStream* stream) {
    conn_.count_request();
    LoopStats::bump(owner_.stats().requests);
    struct Forget {
        bool& follows;
        ~Forget() { follows = false; }
    } forget{input_follows_};
    Exchange exchange(*this, owner_.index(), head, body, stream);
    try {
        owner_.app().serve(exchange);
    } catch (...) {
        // The application logs and counts its handlers' exceptions; this is the last guard.
        if (!exchange.answered()) exchange.respond_simple(500, "Internal Server Error\n");
    }
    if (!exchange.answered()) exchange.respond_simple(500, "the handler sent no response\n");
    // Answered now (a deferred answer is counted when it is completed or cancelled).
    if (exchange.status() != 0) LoopStats::bump(owner_.stats().answered);
}

// No more requests are read: an answer said "Connection: close", the request was refused, the
// client finished, or the server drains.
void Http1Session::end_reading() {
    // Never while finish_body() uses body_ (see there).
    if (phase_ == Phase::Body || phase_ == Phase::BodyWait) body_.reset();
    drop_upload("the request was answered before its body ended");
    if (phase_ == Phase::Head || phase_ == Phase::Body || phase_ == Phase::BodyWait ||
        phase_ == Phase::Stream || phase_ == Phase::Paused)
        phase_ = Phase::Closing;
}

// The connection's first bytes are HTTP/2's preface (or a part of it): the whole preface hands
// the connection to an HTTP/2 session with everything read (after_flush switches); a part of it
// waits for the rest. No HTTP/1.1 request begins like it.
bool Http1Session::begins_http2(std::string_view input) {
    using http::http2::PrefaceMatch;
    const PrefaceMatch match = http::http2::match_preface(input);
    if (match == PrefaceMatch::No) return false;
    if (match == PrefaceMatch::Full) {
        phase_ = Phase::Switching;
        pending().then = [](Connection& c) { return std::make_unique<Http2Session>(c); };
    }
    return true;
}

bool Http1Session::should_pause() const {
    // Answers made in this read sit in the loop's write buffer until the flush: they count, as
    // do answers made and queued behind one still being worked on (a client that pipelines
    // requests for large answers and reads none holds them all).
    const uint64_t unsent =
        out_.empty() ? owner_.write_buffer().size() + output_held() : output_held();
    if (unsent > owner_.config().limits.output_high_water) return true;
    return sending_body() ||
           (pending_ && pending_->slots.size() >= owner_.config().limits.max_pipelined);
}

// Serves what in_ holds (input read earlier), then flushes.
void Http1Session::serve_buffered() {
    const size_t len = in_.size();
    const size_t used = serve_input(in_.data(), len);
    if (phase_ == Phase::Closed) return;
    keep_unused(in_.data(), used, len, used > 0);
    flush();
}

}  // namespace rivet::engine
