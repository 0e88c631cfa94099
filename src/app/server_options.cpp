#include "app/server_options.hpp"

#include <stdexcept>

#include "app/request/stream_access.hpp"
#include "app/request/trailers_access.hpp"
#include "app/websocket/websocket_core.hpp"
#include "core/field_count.hpp"

namespace rivet::app {

// Every field of the public Limits and Timeouts, by name: each is copied to the engine's field
// of the same name (a name missing on either side does not compile), and a field added to one
// struct and not listed here fails the counts below.
// (One field a line: the formatter would pack them.)
// clang-format off
#define RIVET_LIMITS_FIELDS(FIELD)       \
    FIELD(max_request_line)              \
    FIELD(max_header_bytes)              \
    FIELD(max_headers)                   \
    FIELD(max_body)                      \
    FIELD(max_connections)               \
    FIELD(max_requests_per_connection)   \
    FIELD(max_pipelined)                 \
    FIELD(output_high_water)             \
    FIELD(max_buffered_bodies)           \
    FIELD(min_body_rate)                 \
    FIELD(min_send_rate)
#define RIVET_TIMEOUTS_FIELDS(FIELD) \
    FIELD(header_ms)                 \
    FIELD(body_ms)                   \
    FIELD(idle_ms)                   \
    FIELD(write_ms)                  \
    FIELD(linger_ms)                 \
    FIELD(drain_ms)                  \
    FIELD(drain_grace_ms)            \
    FIELD(handshake_ms)
// clang-format on
#define RIVET_COUNT_FIELD(name) +1
static_assert(core::field_count<rivet::Limits> == 0 RIVET_LIMITS_FIELDS(RIVET_COUNT_FIELD),
              "a rivet::Limits field is not converted: add it to RIVET_LIMITS_FIELDS");
static_assert(core::field_count<engine::Limits> == 0 RIVET_LIMITS_FIELDS(RIVET_COUNT_FIELD),
              "an engine::Limits field has no public counterpart in RIVET_LIMITS_FIELDS");
static_assert(core::field_count<rivet::Timeouts> == 0 RIVET_TIMEOUTS_FIELDS(RIVET_COUNT_FIELD),
              "a rivet::Timeouts field is not converted: add it to RIVET_TIMEOUTS_FIELDS");
static_assert(core::field_count<engine::Timeouts> == 0 RIVET_TIMEOUTS_FIELDS(RIVET_COUNT_FIELD),
              "an engine::Timeouts field has no public counterpart in RIVET_TIMEOUTS_FIELDS");

engine::Limits engine_limits(const rivet::Limits& from) {
    engine::Limits to;
#define RIVET_COPY_FIELD(name) to.name = from.name;
    RIVET_LIMITS_FIELDS(RIVET_COPY_FIELD)
    return to;
}

engine::Timeouts engine_timeouts(const rivet::Timeouts& from) {
    engine::Timeouts to;
    RIVET_TIMEOUTS_FIELDS(RIVET_COPY_FIELD)
#undef RIVET_COPY_FIELD
    return to;
}

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
    c.http2.enabled = o.http2;
    c.limits = engine_limits(o.limits);
    c.timeouts = engine_timeouts(o.timeouts);
    return c;
}

engine::ReplyView view_of(const Response& r) {
    using Body = http::ResponseHead::Body;
    engine::ReplyView v;
    v.head.status = r.status();
    v.head.content_type = r.content_type();
    v.head.fields = {detail::ResponseAccess::field_lines(r)};
    if (r.streamed()) {
        v.head.body_kind = Body::Streamed;
        v.stream = engine_stream(r);
    } else if (const FileRange* f = r.file_range()) {
        v.head.body_kind = Body::Sized;
        v.head.content_length = f->length;
        v.file = {f->file, f->file->fd(), f->offset, f->length};
    } else {
        v.head.body = r.body();
    }
    v.trailers = detail::TrailerAccess::of(r);
    v.close = r.close_connection();
    if (auto* upgrade = detail::ResponseAccess::upgrade_of(r)) v.then = upgrade->make;
    return v;
}

engine::Reply reply_of(Response&& r) {
    engine::Reply out;
    out.status = r.status();
    out.content_type.assign(r.content_type());
    out.field_lines.assign(detail::ResponseAccess::field_lines(r));
    out.body = std::move(r.mutable_body());
    out.stream = engine_stream(r);
    if (const FileRange* f = r.file_range())
        out.file = {f->file, f->file->fd(), f->offset, f->length};
    out.trailers = detail::TrailerAccess::of(r);
    out.close = r.close_connection();
    if (auto* upgrade = detail::ResponseAccess::upgrade_of(r)) out.then = upgrade->make;
    return out;
}

}  // namespace rivet::app
