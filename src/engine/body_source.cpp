#include "engine/body_source.hpp"

#include <algorithm>

#include "engine/io_thread.hpp"

namespace rivet::engine {

void rebase_head(http::RequestHead& head, std::vector<http::Header>& fields, const char* from,
                 size_t len, const char* to) {
    auto move = [&](std::string_view& v) {
        // Views outside the moved bytes (the parser's literal "/" for an empty path) stay.
        if (!v.empty() && v.data() >= from && v.data() < from + len)
            v = {to + (v.data() - from), v.size()};
    };
    for (auto* v : {&head.method_name, &head.target, &head.path, &head.query, &head.authority})
        move(*v);
    for (auto& f : fields) {
        move(f.name);
        move(f.value);
    }
}

BodyStream::BodyStream(IoThread& t, BodyOwner& c, const http::RequestHead& h,
                       std::string_view head_bytes, uint64_t limit)
    : thread(t),
      connection(&c),
      head(h),
      head_copy_(head_bytes),
      fields_(h.headers.begin(), h.headers.end()),
      decoder_(h.framing, h.framing == http::BodyFraming::ContentLength ? h.content_length : 0,
               limit) {
    head.headers = fields_;
    rebase_head(head, fields_, head_bytes.data(), head_bytes.size(), head_copy_.data());
    if (h.framing == http::BodyFraming::None ||
        (h.framing == http::BodyFraming::ContentLength && h.content_length == 0)) {
        state = State::Ended;  // nothing to read: the first ask hears the end
        connection = nullptr;
    }
}

size_t BodyStream::decode(std::string_view in, bool& made) {
    made = state != State::Open;
    if (made) return 0;
    const size_t before = piece.size();
    auto r = decoder_.feed(in, &piece);
    received += piece.size() - before;
    if (r.kind == http::BodyDecoder::Result::Error) {
        piece.clear();  // an error ends the body: what came before the bad byte is not given
        fail(r.status, r.reason);
        made = true;
        return r.consumed;
    }
    if (r.kind == http::BodyDecoder::Result::Done) state = State::Ended;
    made = state != State::Open || !piece.empty();
    return r.consumed;
}

BodyPiece BodyStream::current() const {
    if (!piece.empty()) return {BodyPiece::Kind::Data, piece, 0, ""};
    if (state == State::Failed) return {BodyPiece::Kind::Error, {}, error_status_, error_reason_};
    return {BodyPiece::Kind::End, {}, 0, ""};
}

void BodyStream::fail(int status, const char* reason) {
    state = State::Failed;
    error_status_ = status;
    error_reason_ = reason;
}

void BodyStream::deliver() {
    if (!waiting) return;
    auto callback = std::move(waiting);
    waiting = nullptr;
    callback(current());
}

void BodyStream::deliver_later() {
    thread.loop().post([self = shared_from_this()] { self->deliver(); });
}

bool BodySource::next(Callback callback) {
    if (!stream_ || stream_->waiting || !callback) return false;
    BodyStream& s = *stream_;
    s.piece.clear();
    s.waiting = std::move(callback);
    if (s.state == BodyStream::State::Open && s.connection) {
        s.connection->upload_asked();
    } else {
        if (s.state == BodyStream::State::Open) s.fail(0, "the connection is gone");
        s.deliver_later();
    }
    return true;
}

bool BodySource::try_next(BodyPiece& out) {
    if (!stream_) {
        out = {BodyPiece::Kind::Error, {}, 0, "no streamed body"};
        return true;
    }
    BodyStream& s = *stream_;
    if (s.waiting) return false;
    s.piece.clear();
    if (s.state == BodyStream::State::Open) {
        if (!s.connection)
            s.fail(0, "the connection is gone");
        else if (!s.connection->upload_take(s))
            return false;
    }
    out = s.current();
    return true;
}

}  // namespace rivet::engine
