#include "app/server_options.hpp"

#include <stdexcept>

namespace rivet::app {

// A field added to one side and not the other changes its size: convert it below too.
static_assert(sizeof(rivet::Limits) == sizeof(engine::Limits));
static_assert(sizeof(rivet::Timeouts) == sizeof(engine::Timeouts));

engine::ServerConfig server_config(const RunOptions& o) {
    engine::ServerConfig c;
    c.host = o.host;
    c.port = o.port;
    c.threads = o.threads;
    c.listen_fds = o.listen_fds;
    c.proxy_protocol = o.proxy_protocol;
    if (o.proxy_protocol) {
        static const std::vector<std::string> kLoopback = {"127.0.0.0/8", "::1"};
        const auto& trusted = o.proxy_trusted.empty() ? kLoopback : o.proxy_trusted;
        if (auto bad = c.proxy_trusted.assign(trusted); !bad.empty())
            throw std::invalid_argument("proxy_trusted: not an address or network: " + bad);
    }
    const rivet::Limits& l = o.limits;
    c.limits = {l.max_request_line, l.max_header_bytes,  l.max_headers,
                l.max_body,         l.max_connections,   l.max_requests_per_connection,
                l.max_pipelined,    l.output_high_water, l.max_buffered_bodies};
    const rivet::Timeouts& t = o.timeouts;
    c.timeouts = {t.header_ms, t.body_ms,  t.idle_ms,        t.write_ms,
                  t.linger_ms, t.drain_ms, t.drain_grace_ms, t.handshake_ms};
    return c;
}

engine::ReplyView view_of(const Response& r) {
    using Body = http::ResponseHead::Body;
    engine::ReplyView v;
    v.head.status = r.status();
    v.head.content_type = r.content_type();
    v.head.fields = r.headers();
    if (r.producer()) {
        v.head.body_kind = Body::Streamed;
        v.stream = r.producer();
    } else if (const FileRange* f = r.file_range()) {
        v.head.body_kind = Body::Sized;
        v.head.content_length = f->length;
        v.file = {f->file, f->file->fd(), f->offset, f->length};
    } else {
        v.head.body = r.body();
    }
    v.close = r.close_connection();
    return v;
}

engine::Reply reply_of(Response&& r) {
    engine::Reply out;
    out.status = r.status();
    out.content_type.assign(r.content_type());
    out.fields = r.headers();
    out.body = std::move(r.mutable_body());
    out.stream = r.producer();
    if (const FileRange* f = r.file_range())
        out.file = {f->file, f->file->fd(), f->offset, f->length};
    out.close = r.close_connection();
    return out;
}

}  // namespace rivet::app
