#include "engine/reply.hpp"

namespace rivet::engine {

Reply Reply::copy_of(const ReplyView& v) {
    Reply r;
    r.status = v.head.status;
    r.content_type.assign(v.head.content_type);
    r.field_lines.assign(v.head.fields.text);
    r.body.assign(v.head.body);
    r.stream = v.stream;
    r.file = v.file;
    r.trailers = v.trailers;
    r.close = v.close;
    r.then = v.then;
    return r;
}

ReplyView Reply::view() const {
    ReplyView v;
    v.head.status = status;
    v.head.content_type = content_type;
    v.head.fields = {field_lines};
    if (stream) {
        v.head.body_kind = http::ResponseHead::Body::Streamed;
        v.stream = stream;
    } else if (file.owner) {
        v.head.body_kind = http::ResponseHead::Body::Sized;
        v.head.content_length = file.length;
        v.file = file;
    } else {
        v.head.body = body;
    }
    v.trailers = trailers;
    v.close = close;
    v.then = then;
    return v;
}

}  // namespace rivet::engine
