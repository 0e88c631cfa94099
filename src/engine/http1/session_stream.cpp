// Http1Session, streamed request bodies: the body is read as the handler asks for it (BodySource),
// so that a handler that stops asking stalls the client instead of filling memory.
#include "engine/http1/session.hpp"
#include "engine/io_thread.hpp"

namespace rivet::engine {

// The head is parsed and the plan says stream: serve() runs now, before any body byte is read.
// The head moves into the stream's state, so it outlives in_ and the requests after it.
void Http1Session::start_upload(const http::RequestHead& head, std::string_view head_bytes,
                                const BodyPlan& plan) {
    auto stream = std::make_shared<BodyStream>(owner_, *this, head, head_bytes, plan.limit);
    if (stream->state == BodyStream::State::Open) {
        upload_ = stream;
        phase_ = Phase::Stream;
        after_upload_ = Phase::Head;
        pace_.start(owner_.loop().now_ms());
        pace_.pause(owner_.loop().now_ms());  // until the handler asks (arm_timer)
        // Sent when the handler first asks for a piece: one that answers at once never needs
        // the body, and the client then need not send it.
        stream->continue_owed = head.expect_continue;
    }
    dispatch(stream->head, {}, stream.get());
}

// Phase::Stream: gives the waiting handler pieces of `data` as long as it asks for them.
// Returns the bytes used; the rest stays buffered until the next ask.
size_t Http1Session::feed_upload(const char* data, size_t len) {
    size_t pos = 0;
    while (phase_ == Phase::Stream && upload_->waiting) {
        std::shared_ptr<BodyStream> stream = upload_;  // the callback may drop every handle
        bool made = false;
        pos += stream->decode({data + pos, len - pos}, made);
        if (!made) break;  // all of `data` used, nothing to give yet
        if (stream->state == BodyStream::State::Failed) {
            fail_upload();
        } else if (stream->state == BodyStream::State::Ended) {
            end_upload();
        }
        stream->deliver();  // may ask again at once: this loop serves it, no recursion
        if (phase_ == Phase::Closed) break;
    }
    return pos;
}

// The body is complete: the connection is done with it and reads the next request, unless the
// request was its last.
void Http1Session::end_upload() {
    upload_->connection = nullptr;
    upload_.reset();
    phase_ = after_upload_;
    head_started_ms_ = owner_.loop().now_ms();
}

// The body is malformed or over its limit: refused in place of the handler's answer if that is
// still to come; if it was given already, the connection just ends after it.
void Http1Session::fail_upload() {
    std::shared_ptr<BodyStream> stream = std::move(upload_);
    stream->connection = nullptr;
    phase_ = Phase::Head;
    BodyPiece error = stream->current();
    fail(error.status, error.reason, &stream->head, stream->answer_slot);
}

// The connection is done with a body that is not complete (closed, answered, refused): the
// handler hears it, from a task of its own (this may run deep inside a close).
void Http1Session::drop_upload(const char* reason) {
    if (!upload_) return;
    std::shared_ptr<BodyStream> stream = std::move(upload_);
    stream->connection = nullptr;
    if (stream->state == BodyStream::State::Open) stream->fail(0, reason);
    if (stream->waiting) stream->deliver_later();
}

void Http1Session::upload_asked() {
    if (serving_) return;  // serve_input() feeds it once the handler returns
    // Buffered bytes, a 100 Continue to send, or another connection's answers in the shared
    // write buffer: go on from a task of this connection's own.
    if (!in_.empty() || upload_->continue_owed || !owner_.write_buffer().empty())
        return owner_.kick(conn_);
    update_interest();
    arm_timer();
}

bool Http1Session::upload_take(BodyStream& s) {
    if (serving_ || phase_ != Phase::Stream || in_.empty()) return false;
    bool made = false;
    size_t used = s.decode(in_, made);
    in_.erase(0, used);
    if (!made) return false;
    if (s.state == BodyStream::State::Ended) end_upload();
    // The request after the body, or the refusal of a bad one, go on from a task.
    if (s.state != BodyStream::State::Open) owner_.kick(conn_);
    return true;
}

void Http1Session::kicked() {
    if (phase_ == Phase::Closed || serving_) return;
    if (phase_ == Phase::Stream) {
        if (upload_->state == BodyStream::State::Failed) {
            fail_upload();
            return flush();
        }
        if (!upload_->waiting || in_.empty()) return flush();  // after_flush: interest, timer
    }
    if ((phase_ == Phase::Head || phase_ == Phase::Stream) && !in_.empty()) return serve_buffered();
    flush();
}

bool Http1Session::answers_owed_before_upload() const {
    if (unsent() || sending_body()) return true;
    if (!pending_ || pending_->slots.empty()) return false;
    return pending_->slots.front().sequence != upload_->answer_slot;
}

}  // namespace rivet::engine
