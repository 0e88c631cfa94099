// Http2Stream, the answering side: the Responder every Exchange answers through, the answer's
// head submitted as HEADERS, and its body (bytes, a file, a producer) read by nghttp2's data
// source as the peer's window allows.
#include <unistd.h>

#include <algorithm>
#include <cstring>

#include "engine/http2/session.hpp"
#include "engine/http2/stream.hpp"
#include "engine/io_thread.hpp"

namespace rivet::engine {

nghttp2_data_source_read_callback http2_body_reader();  // session_frames.cpp

Deferred Http2Stream::answer(const http::RequestHead*, const Answer& a) {
    switch (a.kind) {
        case Answer::Kind::Reply:
            submit(*a.reply, nullptr);
            return {};
        case Answer::Kind::Simple:
            submit_simple(a.status, a.body, a.extra_fields);
            return {};
        case Answer::Kind::Later:
            return defer();
        case Answer::Kind::Refusal:
            // In place of a deferred answer still to come: that one then finds the stream
            // answered and is dropped.
            if (a.reply)
                submit(*a.reply, nullptr);
            else
                submit_simple(a.status, a.body, a.extra_fields);
            return {};
    }
    return {};
}

Deferred Http2Stream::defer() {
    Deferred d;
    if (output_ != Output::Owed) {
        // Nothing to wait for (the stream is answered or gone): the request ends here.
        LoopStats::bump(session_->owner().stats().answered);
        return d;
    }
    d.thread_ = &session_->owner();
    d.fd_ = connection().fd();
    d.connection_id_ = connection().id();
    d.sequence_ = uint64_t(id_);
    d.state_ = std::make_shared<DeferredState>();
    deferred_ = d.state_;
    output_ = Output::Later;
    return d;
}

void Http2Stream::complete(Reply&& reply) {
    if (output_ != Output::Later) return;
    deferred_.reset();
    ReplyView view = reply.view();
    submit(view, &reply.body);
}

void Http2Stream::submit_fields(bool with_body) {
    ResponseFields& f = session_->response_fields();
    nghttp2_data_provider source;
    source.source.ptr = this;
    source.read_callback = http2_body_reader();
    if (nghttp2_submit_response(session_->ng(), id_, f.list(), f.size(),
                                with_body ? &source : nullptr) != 0) {
        if (body_kind_ == Body::Bytes) session_->release_answer(out_.size() - out_offset_);
        body_kind_ = Body::None;
        nghttp2_submit_rst_stream(session_->ng(), NGHTTP2_FLAG_NONE, id_, NGHTTP2_INTERNAL_ERROR);
    }
    output_ = Output::Sending;
    deferred_.reset();
}

void Http2Stream::submit(const ReplyView& reply, std::string* movable_body) {
    using Kind = http::ResponseHead::Body;
    if (output_ == Output::Sending || output_ == Output::Sent) return;
    if (reply.then) {
        // A protocol switch (101) has no meaning on a stream (RFC 9113 §8.6).
        return submit_simple(501, "Not Implemented: no protocol switch over HTTP/2\n", {});
    }
    // An answer that ends its connection (Connection: close on HTTP/1.1): no new streams, the
    // ones in flight finish.
    if (reply.close) session_->go_away();
    const http::ResponseHead& h = reply.head;
    const bool has_body = !head_only_ && http::status_has_body(h.status);
    ResponseFields& f = session_->response_fields();
    f.start(h.status, session_->owner().date_block());
    if (!h.content_type.empty()) f.add("content-type", h.content_type);
    for (http::Header field : h.fields)
        if (!http::iequals(field.name, "content-length")) f.add(field.name, field.value);
    body_kind_ = Body::None;
    switch (h.body_kind) {
        case Kind::Bytes:
            if (http::status_has_body(h.status)) f.add_length(h.body.size());
            if (has_body && !h.body.empty()) {
                body_kind_ = Body::Bytes;
                if (movable_body)
                    out_ = std::move(*movable_body);
                else
                    out_.assign(h.body);
                out_offset_ = 0;
                session_->hold_answer(out_.size());
            }
            break;
        case Kind::Sized:
            if (http::status_has_body(h.status)) f.add_length(h.content_length);
            if (has_body && reply.file.length > 0) {
                body_kind_ = Body::File;
                file_ = reply.file;
            }
            break;
        case Kind::Streamed:
            if (has_body && reply.stream) {
                body_kind_ = Body::Producer;
                producer_ = reply.stream;
                waker_ = StreamWaker(std::make_shared<StreamLink>());
                open_link(*waker_.link(), session_->owner(), connection().fd(), connection().id());
            }
            break;
    }
    // Trailers go after the body, in a HEADERS frame of their own: a body (even an empty one)
    // is sent so that they have a frame to follow.
    if (has_body && reply.trailers) trailers_ = reply.trailers;
    submit_fields(body_kind_ != Body::None || trailers_);
}

void Http2Stream::submit_simple(int status, std::string_view body, std::string_view extra_fields) {
    if (output_ == Output::Sending || output_ == Output::Sent) return;
    ResponseFields& f = session_->response_fields();
    f.start(status, session_->owner().date_block());
    f.add_lines({extra_fields});
    body_kind_ = Body::None;
    if (http::status_has_body(status)) {
        f.add("content-type", "text/plain; charset=utf-8");
        f.add_length(body.size());
        if (!head_only_ && !body.empty()) {
            body_kind_ = Body::Bytes;
            out_.assign(body);
            out_offset_ = 0;
            session_->hold_answer(out_.size());
        }
    }
    submit_fields(body_kind_ != Body::None);
}

// nghttp2's data source: up to `length` bytes of the body into `buf`, the end flagged.
ssize_t Http2Stream::read_body(uint8_t* buf, size_t length, uint32_t* flags) {
    progress_ms = session_->owner().loop().now_ms();
    switch (body_kind_) {
        case Body::None:
            end_body(flags);
            return 0;
        case Body::Bytes: {
            const size_t n = std::min(length, out_.size() - out_offset_);
            std::memcpy(buf, out_.data() + out_offset_, n);
            out_offset_ += n;
            session_->release_answer(n);
            if (out_offset_ == out_.size()) {
                end_body(flags);
                std::string().swap(out_);
                out_offset_ = 0;
            }
            return ssize_t(n);
        }
        case Body::File: {
            const size_t want = size_t(std::min<uint64_t>(length, file_.length));
            const ssize_t n = ::pread(file_.fd, buf, want, off_t(file_.offset));
            // The file shrank under us (0) or failed: the promised length cannot be kept.
            if (n <= 0) return NGHTTP2_ERR_TEMPORAL_CALLBACK_FAILURE;
            file_.offset += uint64_t(n);
            file_.length -= uint64_t(n);
            if (file_.length == 0) {
                end_body(flags);
                file_ = {};
            }
            return n;
        }
        case Body::Producer:
            break;
    }
    // A producer: its pieces are handed on as they come; when it waits, so does the stream
    // (NGHTTP2_ERR_DEFERRED) until its waker resumes it.
    while (out_offset_ == out_.size() && !producer_done_) {
        if (producer_said_wait_) {
            if (!waker_.link()->woken.exchange(false, std::memory_order_acq_rel)) {
                if (session_->owner().draining()) {
                    // The drain ends a waiting body (its client sees the end of it, without
                    // trailers: the body is not complete), as on HTTP/1.1.
                    producer_done_ = true;
                    trailers_.reset();
                    break;
                }
                producer_waiting_ = true;
                return NGHTTP2_ERR_DEFERRED;
            }
            producer_said_wait_ = false;
        }
        out_.clear();
        out_offset_ = 0;
        Produced made;
        try {
            made = (*producer_)(out_, waker_);
        } catch (...) {
            return NGHTTP2_ERR_TEMPORAL_CALLBACK_FAILURE;  // the stream is reset
        }
        if (made == Produced::Done) producer_done_ = true;
        if (made == Produced::Waiting) producer_said_wait_ = true;
    }
    const size_t n = std::min(length, out_.size() - out_offset_);
    std::memcpy(buf, out_.data() + out_offset_, n);
    out_offset_ += n;
    if (producer_done_ && out_offset_ == out_.size()) {
        end_body(flags);
        drop_producer();
    }
    return ssize_t(n);
}

// The body's last bytes are read: the stream ends with them, or with the trailers after them
// (their names lowercased, as every field on HTTP/2).
void Http2Stream::end_body(uint32_t* flags) {
    *flags |= NGHTTP2_DATA_FLAG_EOF;
    std::shared_ptr<Trailers> trailers = std::move(trailers_);
    if (!trailers || trailers->fields.empty()) return;
    ResponseFields& f = session_->response_fields();
    f.clear();
    for (const auto& [name, value] : trailers->fields) f.add(name, value);
    if (nghttp2_submit_trailer(session_->ng(), id_, f.list(), f.size()) == 0)
        *flags |= NGHTTP2_DATA_FLAG_NO_END_STREAM;
}

bool Http2Stream::resume(const StreamLink* link) {
    if (!waker_.link() || waker_.link().get() != link) return false;
    if (link->aborted.load(std::memory_order_acquire)) {
        // Too slow to keep up with what it is sent: this stream ends, the others go on.
        nghttp2_submit_rst_stream(session_->ng(), NGHTTP2_FLAG_NONE, id_, NGHTTP2_CANCEL);
        return true;
    }
    if (!producer_waiting_) return true;  // it looks at the wake when it next waits
    producer_waiting_ = false;
    nghttp2_session_resume_data(session_->ng(), id_);
    return true;
}

void Http2Stream::end_waiting_body() {
    if (!producer_ || !producer_waiting_) return;
    producer_waiting_ = false;
    producer_done_ = true;
    trailers_.reset();  // cut short: not the complete body the trailers describe
    nghttp2_session_resume_data(session_->ng(), id_);
}

void Http2Stream::drop_producer() {
    if (waker_.link()) close_link(*waker_.link());
    waker_ = {};
    producer_waiting_ = false;
    // Last: the producer's destructor may be the stream's owner learning that it ended.
    std::shared_ptr<StreamProducer> gone = std::move(producer_);
}

void Http2Stream::sent() {
    output_ = Output::Sent;
    // The answer is complete before the request: the rest of it is not wanted (RFC 9113 §8.1).
    if (input_ != Input::Complete)
        nghttp2_submit_rst_stream(session_->ng(), NGHTTP2_FLAG_NONE, id_, NGHTTP2_NO_ERROR);
}

// The stream is gone (done, reset, or its connection closed): whoever waits on it hears it.
void Http2Stream::closed(uint32_t) {
    if (output_ != Output::Sent) output_ = Output::Sent;
    if (deferred_ && deferred_->settle(DeferredState::kCancelled)) {
        LoopStats::bump(session_->owner().stats().cancelled);
        if (auto fn = std::move(deferred_->on_cancel)) fn();
    }
    deferred_.reset();
    if (upload_) {
        std::shared_ptr<BodyStream> upload = std::move(upload_);
        upload->connection = nullptr;
        if (upload->state == BodyStream::State::Open) upload->fail(0, "the stream was reset");
        if (upload->waiting) upload->deliver_later();
    }
    drop_producer();
    release_budget();
    if (body_kind_ == Body::Bytes) {  // what the client never took
        session_->release_answer(out_.size() - out_offset_);
        std::string().swap(out_);
        out_offset_ = 0;
    }
}

}  // namespace rivet::engine
