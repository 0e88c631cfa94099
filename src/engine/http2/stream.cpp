// Http2Stream, the request side: the header list into a RequestHead, the body planned, buffered
// or streamed to the handler, and the request dispatched to the application.
#include "engine/http2/stream.hpp"

#include "engine/http2/session.hpp"
#include "engine/io_thread.hpp"

namespace rivet::engine {

namespace {

constexpr size_t kSpareStreams = 256;  // per loop thread
thread_local std::vector<std::unique_ptr<Http2Stream>> spare_streams;

}  // namespace

Http2Stream::Http2Stream(Http2Session& session, int32_t id) : session_(&session), id_(id) {}

std::unique_ptr<Http2Stream> Http2Stream::make(Http2Session& session, int32_t id) {
    if (spare_streams.empty()) return std::make_unique<Http2Stream>(session, id);
    std::unique_ptr<Http2Stream> s = std::move(spare_streams.back());
    spare_streams.pop_back();
    s->reuse(session, id);
    return s;
}

// Only once closed() has told everyone who waited on it: nothing refers to it any more.
void Http2Stream::recycle(std::unique_ptr<Http2Stream> s) {
    if (spare_streams.size() >= kSpareStreams || s->reserved_ > 0) return;
    spare_streams.push_back(std::move(s));
}

void Http2Stream::reuse(Http2Session& session, int32_t id) {
    session_ = &session;
    id_ = id;
    progress_ms = 0;
    index = 0;
    tree_priority = false;
    close_code = 0;
    input_ = Input::Headers;
    output_ = Output::Owed;
    body_follows_ = planned_ = over_limit_ = dispatched_ = refused_ = head_only_ = false;
    ended_in_wait_ = false;
    producer_waiting_ = producer_done_ = producer_said_wait_ = false;
    request_.clear();
    head_ = {};
    fields_.clear();
    plan_ = {};
    std::string().swap(body_);
    received_ = unconsumed_ = reserved_ = wanted_ = wait_since_ms_ = 0;
    pace_ = {};
    uncounted_ = 0;
    upload_.reset();
    std::string().swap(inbox_);
    deferred_.reset();
    body_kind_ = Body::None;
    if (out_.capacity() > 16 * 1024) std::string().swap(out_);
    out_.clear();
    out_offset_ = 0;
    file_ = {};
    producer_.reset();
    waker_ = {};
    trailers_.reset();
}

Http2Stream::~Http2Stream() {
    release_budget();
    if (waker_.link()) close_link(*waker_.link());
}

Connection& Http2Stream::connection() {
    return session_->connection();
}

void Http2Stream::consume(size_t n) {
    if (n == 0) return;
    unconsumed_ -= n;
    nghttp2_session_consume(session_->ng(), id_, n);
}

void Http2Stream::data(const uint8_t* bytes, size_t len) {
    const std::string_view piece(reinterpret_cast<const char*>(bytes), len);
    received_ += len;
    unconsumed_ += len;
    pace_.add(len);
    if (refused_ || over_limit_) return consume(len);  // dropped: the client may go on
    if (planned_ && received_ > plan_.limit) {
        over_limit_ = true;
        session_->mark_ready(*this);
        return consume(len);
    }
    if (upload_) {
        // Taken by the handler when it asks; its window is given back then.
        inbox_.append(piece);
        if (upload_->waiting) session_->mark_ready(*this);
        return;
    }
    body_.append(piece);
    if (planned_ && input_ == Input::Body) consume(len);
}

void Http2Stream::end_of_input() {
    // A body that came whole within the window still has its budget to reserve before the
    // handler sees it (admit_body).
    if (input_ == Input::BodyWait) {
        ended_in_wait_ = true;
        return;
    }
    input_ = Input::Complete;
}

void Http2Stream::run_ready() {
    if (!planned_) plan();
    if (refused_) return;
    if (over_limit_) {
        if (upload_) {
            upload_->fail(413, "content too large");
            upload_->connection = nullptr;
            if (upload_->waiting) upload_->deliver_later();
            upload_.reset();
        }
        return refuse(413, "content too large");
    }
    if (upload_) return deliver_upload();
    if (input_ != Input::Complete || dispatched_) return;
    if (session_->output_full()) return session_->hold_back(*this);
    dispatch();
}

// The header list is complete: the head is built and the application plans its body, as
// HTTP/1.1 does after a head.
void Http2Stream::plan() {
    planned_ = true;
    IoThread& owner = session_->owner();
    const auto& limits = owner.config().limits;
    if (header_list_size() > limits.max_header_bytes)
        return refuse(431, "request header fields too large");
    if (int status = request_.finish(head_, fields_, body_follows_))
        return refuse(status, "invalid Content-Length");
    head_only_ = head_.method == http::Method::Head;
    if (!tree_priority) apply_urgency();
    plan_ = {limits.max_body, BodyPlan::Mode::Buffered};
    owner.app().plan_body(head_, plan_);
    if ((head_.framing == http::BodyFraming::ContentLength && head_.content_length > plan_.limit) ||
        received_ > plan_.limit)
        return refuse(413, "content too large");
    if (plan_.mode == BodyPlan::Mode::Streamed) {
        auto stream =
            std::make_shared<BodyStream>(owner, *this, head_, request_.storage(), plan_.limit);
        inbox_ = std::move(body_);  // what came with the head
        body_.clear();
        // No body at all: the handler hears the end at its first ask.
        if (stream->state == BodyStream::State::Open) upload_ = stream;
        return dispatch(stream.get());
    }
    if (input_ == Input::Complete) return;
    // A buffered body reserves what it may grow to, as on HTTP/1.1; past the budget its bytes
    // are kept but not consumed, so the client's window closes until there is room.
    const uint64_t wanted =
        head_.framing == http::BodyFraming::ContentLength ? head_.content_length : plan_.limit;
    if (owner.budget().try_take(wanted)) {
        reserved_ = wanted;
        consume(unconsumed_);
        pace_.start(owner.loop().now_ms());
    } else {
        reserved_ = 0;
        input_ = Input::BodyWait;
        wanted_ = wanted;
        wait_since_ms_ = owner.loop().now_ms();
        session_->wait_for_budget();
    }
}

// RFC 9218: a client that says "priority: u=N" (0 most urgent, 3 by default, 7 least) and no
// RFC 7540 priority gets it as a weight in the scheduler's tree, each level twice the next:
// more urgent streams get more of the connection, none starves. ("i", incremental, is not
// used: the tree interleaves streams of equal weight anyway.)
void Http2Stream::apply_urgency() {
    const std::string_view field = http::find_header(head_, "priority");
    const size_t u = field.find("u=");
    if (u == std::string_view::npos || u + 2 >= field.size()) return;
    const char digit = field[u + 2];
    if (digit < '0' || digit > '7') return;
    const int urgency = digit - '0';
    nghttp2_priority_spec spec;
    const int32_t weight = urgency <= 3 ? 16 << (3 - urgency) : 16 >> (urgency - 3);
    nghttp2_priority_spec_init(&spec, 0, weight, 0);
    nghttp2_session_change_stream_priority(session_->ng(), id_, &spec);
}

bool Http2Stream::admit_body() {
    if (input_ != Input::BodyWait) return true;
    if (!session_->owner().budget().try_take(wanted_)) return false;
    reserved_ = wanted_;
    input_ = ended_in_wait_ ? Input::Complete : Input::Body;
    consume(unconsumed_);
    pace_.start(session_->owner().loop().now_ms());  // the wait was the server's
    if (input_ == Input::Complete) session_->mark_ready(*this);
    return true;
}

bool Http2Stream::refuses_body(uint64_t now, bool stalled) {
    if (upload_ || dispatched_ || refused_ || output_ != Output::Owed || !planned_) return false;
    const auto& cfg = session_->owner().config();
    if (input_ == Input::BodyWait) {
        if (now - wait_since_ms_ < cfg.timeouts.body_ms) return false;
        input_ = Input::Complete;  // no longer waits: admit_waiting_body passes it by
        refuse(503, "the server is receiving too many request bodies; try again",
               kBudgetRetryAfterS);
        return true;
    }
    if (input_ != Input::Body) return false;
    if (stalled) {
        refuse(408, "the request body stopped arriving");
    } else if (!pace_.judge(now, cfg.limits.min_body_rate, cfg.timeouts.body_ms)) {
        refuse(408, "the request body arrived slower than the minimum rate");
    } else {
        return false;
    }
    input_ = Input::Complete;  // the rest is dropped
    return true;
}

void Http2Stream::release_budget() {
    if (reserved_ == 0) return;
    session_->owner().budget().give_back(reserved_);
    reserved_ = 0;
}

void Http2Stream::dispatch(BodyStream* stream) {
    dispatched_ = true;
    session_->count_request();
    // The stream's state outlives the call whatever the handler does with its source.
    std::shared_ptr<BodyStream> keep = stream ? stream->shared_from_this() : nullptr;
    Exchange exchange(*this, session_->owner().index(), stream ? stream->head : head_, body_,
                      stream);
    try {
        session_->owner().app().serve(exchange);
    } catch (...) {
        // The application logs and counts its handlers' exceptions; this is the last guard.
        if (!exchange.answered()) exchange.respond_simple(500, "Internal Server Error\n");
    }
    // Answered now (a deferred answer is counted when it is completed or cancelled).
    if (exchange.status() != 0) LoopStats::bump(session_->owner().stats().answered);
    // A buffered body is the handler's to copy if it keeps it (as on HTTP/1.1).
    std::string().swap(body_);
    release_budget();
}

// Refuses the request (431, 413, 400): the application shapes the answer; the rest of the
// body, if any, is dropped (and the stream reset once the answer has left).
void Http2Stream::refuse(int status, const char* reason, unsigned retry_after_s) {
    refused_ = true;
    consume(unconsumed_);
    std::string().swap(body_);
    release_budget();
    IoThread& owner = session_->owner();
    auto& app = owner.app();
    const PeerIp peer = connection().peer_ip();
    app.on_protocol_error(owner.index(), peer, status);
    if (output_ != Output::Owed && output_ != Output::Later) return;
    ErrorReply reply(*this, 0);
    try {
        app.answer_protocol_error(
            {status, reason, planned_ ? &head_ : nullptr, owner.index(), peer, retry_after_s},
            reply);
    } catch (...) {
        // the engine's own answer below
    }
    if (reply.answered()) return;
    const std::string body = std::to_string(status) + " " +
                             std::string(http::status_reason(status)) + ": " + reason + "\n";
    const std::string fields =
        retry_after_s ? "Retry-After: " + std::to_string(retry_after_s) + "\r\n" : std::string();
    answer(nullptr, {Answer::Kind::Refusal, nullptr, status, body, fields});
}

// A streamed body's handler asked for a piece: it comes from a task (never inside next()).
void Http2Stream::upload_asked() {
    if (!inbox_.empty() || input_ == Input::Complete) session_->kick();
}

bool Http2Stream::upload_take(BodyStream& s) {
    if (!inbox_.empty()) {
        s.append(inbox_);
        consume(inbox_.size());
        inbox_.clear();
        return true;
    }
    if (input_ != Input::Complete) return false;
    s.state = BodyStream::State::Ended;
    s.connection = nullptr;
    upload_.reset();
    return true;
}

void Http2Stream::deliver_upload() {
    if (!upload_ || !upload_->waiting) return;
    std::shared_ptr<BodyStream> upload = upload_;
    upload->piece.clear();
    if (upload_take(*upload)) upload->deliver();
}

}  // namespace rivet::engine
