#include "http/response_writer.hpp"

#include <charconv>
#include <cstring>

#include "core/short_copy.hpp"
#include "http/request_parser.hpp"

namespace rivet::http {

namespace {

void append_uint(std::string& out, uint64_t v) {
    char buf[24];
    auto r = std::to_chars(buf, buf + sizeof buf, v);
    out.append(buf, size_t(r.ptr - buf));
}

// "HTTP/1.1 200 OK\r\n" for every code, formatted once at start-up rather than per response.
class StatusLines {
public:
    StatusLines() {
        for (int code = 100; code < 600; ++code) {
            std::string& line = lines_[code - 100];
            line = "HTTP/1.1 " + std::to_string(code) + " ";
            line += status_reason(code);
            line += "\r\n";
        }
    }
    std::string_view operator[](int code) const { return lines_[code - 100]; }

private:
    std::string lines_[500];
};

const StatusLines kStatusLines;

std::string_view status_line(int status) {
    if (status < 100 || status > 599) status = 500;  // Response::status() refuses these anyway
    return kStatusLines[status];
}

void append_status_line(std::string& out, int status) {
    out.append(status_line(status));
}

// Up to this size a Bytes body is gathered with the head; past it, appended by itself.
constexpr size_t kShortBody = 128;

// A response head is a dozen short pieces. Each std::string::append is an out-of-line call that
// checks the capacity and then calls memcpy; gathered here and appended once, a piece costs a
// short copy. Pieces that do not fit go to `out` in order, so any size is written correctly.
//
// The room is the caller's array, not a member: a char store may alias any object it could
// point into, so with the bytes inside this object every copy made the compiler store the cursor
// and load it back (a third of write_response's instructions). With the room outside and every
// member function inlined, the object's address is never taken and the cursor stays in a
// register.
class Gather {
public:
    static constexpr size_t kRoom = 512;
    Gather(std::string& out, char (&room)[kRoom]) : out_(out), base_(room), at_(room) {}
    Gather(const Gather&) = delete;
    Gather& operator=(const Gather&) = delete;

    [[gnu::always_inline]] void put(std::string_view s) {
        if (s.size() > size_t(base_ + kRoom - at_)) {
            flush();
            if (s.size() > kRoom) return (void)out_.append(s);
        }
        core::copy_short(at_, s.data(), s.size());
        at_ += s.size();
    }
    [[gnu::always_inline]] void put_uint(uint64_t v) {
        if (base_ + kRoom - at_ < 20) flush();  // 20 digits: the longest uint64_t
        at_ = std::to_chars(at_, base_ + kRoom, v).ptr;
    }
    [[gnu::always_inline]] void flush() {
        out_.append(base_, size_t(at_ - base_));
        at_ = base_;
    }

private:
    std::string& out_;
    char* const base_;
    char* at_;
};

// The Connection field a response needs for its request, if any.
std::string_view connection_field(const Framing& framing) {
    if (!framing.keep_alive) return "Connection: close\r\n";
    if (framing.version_minor == 0) return "Connection: keep-alive\r\n";
    return "";  // not a default view: its null data must not reach memcpy
}

}  // namespace

bool chunked_body(const ResponseHead& res, const Framing& framing) {
    // An HTTP/1.0 client cannot read chunked coding: a stream runs until close, and trailers
    // are dropped (there is nothing to carry them).
    return framing.version_minor >= 1 && status_has_body(res.status) &&
           (res.body_kind == ResponseHead::Body::Streamed || res.trailers);
}

void write_response(std::string& out, const ResponseHead& res, const Framing& framing,
                    std::string_view date_block) {
    char room[Gather::kRoom];
    Gather g(out, room);
    g.put(status_line(res.status));
    g.put(date_block);
    std::string_view type = res.content_type;
    bool has_body = status_has_body(res.status);
    if (!type.empty() && has_body) {
        g.put("Content-Type: ");
        g.put(type);
        g.put("\r\n");
    }
    if (!res.fields.empty()) g.put(res.fields.text);  // already the lines a head carries
    bool announced = false;                           // a Trailer field the handler set itself
    if (res.trailers)
        for (Header field : res.fields) announced = announced || iequals(field.name, "Trailer");
    using Body = ResponseHead::Body;
    const bool chunked = chunked_body(res, framing);
    if (chunked) {
        g.put("Transfer-Encoding: chunked\r\n");
        if (res.trailers && !res.trailers->empty() && !announced) {
            // The names known now (RFC 9110 §6.6.2): a recipient may use them to decide whether
            // to wait for the trailers. Fields added later are sent unannounced.
            g.put("Trailer: ");
            bool first = true;
            for (auto& field : *res.trailers) {
                if (!first) g.put(", ");
                g.put(field.first);
                first = false;
            }
            g.put("\r\n");
        }
    } else if (has_body && res.body_kind != Body::Streamed) {
        g.put("Content-Length: ");
        g.put_uint(res.body_kind == Body::Sized ? res.content_length : res.body.size());
        g.put("\r\n");
    }
    if (res.status == 101 && framing.keep_alive)  // the connection goes on in the new protocol
        g.put("Connection: Upgrade\r\n");
    else
        g.put(connection_field(framing));
    g.put("\r\n");
    const bool bytes_follow =
        has_body && !framing.head_only && !chunked && res.body_kind == Body::Bytes;
    // A short body rides along; a long one is not copied twice.
    // (An empty body is no piece: a default string_view's null data must not reach memcpy.)
    if (bytes_follow && !res.body.empty() && res.body.size() <= kShortBody) g.put(res.body);
    g.flush();
    if (bytes_follow && res.body.size() > kShortBody) return (void)out.append(res.body);
    if (!has_body || framing.head_only || !chunked) return;
    if (res.body_kind == Body::Bytes) {  // with trailers: all of it is known now
        append_chunk(out, res.body);
        append_last_chunk(out, *res.trailers);
    } else if (res.body_kind == Body::Sized) {  // with trailers: one chunk, the caller's bytes
        if (res.content_length == 0) return append_last_chunk(out, *res.trailers);
        char hex[20];
        auto r = std::to_chars(hex, hex + sizeof hex, res.content_length, 16);
        out.append(hex, size_t(r.ptr - hex));
        out.append("\r\n", 2);
    }
}

void write_simple_response(std::string& out, int status, std::string_view body,
                           const Framing& framing, std::string_view date_block,
                           std::string_view extra_fields) {
    append_status_line(out, status);
    out.append(date_block);
    out.append(extra_fields);
    if (status_has_body(status)) {
        out.append("Content-Type: text/plain; charset=utf-8\r\nContent-Length: ");
        append_uint(out, body.size());
        out.append("\r\n", 2);
    }
    out.append(connection_field(framing));
    out.append("\r\n", 2);
    if (status_has_body(status) && !framing.head_only) out.append(body);
}

void append_chunk(std::string& out, std::string_view data) {
    if (data.empty()) return;
    char hex[20];
    auto r = std::to_chars(hex, hex + sizeof hex, data.size(), 16);
    out.append(hex, size_t(r.ptr - hex));
    out.append("\r\n", 2);
    out.append(data);
    out.append("\r\n", 2);
}

void append_last_chunk(std::string& out) {
    out.append("0\r\n\r\n", 5);
}

void append_last_chunk(std::string& out,
                       std::span<const std::pair<std::string, std::string>> trailers) {
    out.append("0\r\n", 3);
    for (auto& [name, value] : trailers) {
        out.append(name);
        out.append(": ", 2);
        out.append(value);
        out.append("\r\n", 2);
    }
    out.append("\r\n", 2);
}

void append_file_chunk_end(std::string& out,
                           std::span<const std::pair<std::string, std::string>> trailers) {
    out.append("\r\n", 2);
    append_last_chunk(out, trailers);
}

}  // namespace rivet::http
