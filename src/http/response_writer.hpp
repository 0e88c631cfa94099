// ResponseWriter: serializes responses into a connection's output bytes (RFC 9112 §4-6).
//
// The writer knows responses only as a ResponseHead of views, which the layer above fills from
// its own response type, so the protocol layer depends on no API above it. The Date and Server
// fields are formatted once per second per loop (DateCache) and copied as one block; the head's
// other pieces (and a short body) are gathered on the stack and appended to the caller's output
// string at once.
#pragma once

#include <cstdint>
#include <span>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "http/field_lines.hpp"

namespace rivet::http {

// What the writer needs of a response. Views: valid for the call only.
struct ResponseHead {
    enum class Body : uint8_t {
        Bytes,     // `body` follows the head (Content-Length: its size)
        Sized,     // `content_length` bytes the caller sends after the head (a file)
        Streamed,  // an unknown length: chunked on HTTP/1.1, until the close on HTTP/1.0
    };
    int status = 200;
    std::string_view content_type;  // omitted when empty
    FieldLines fields;              // validated by the caller
    Body body_kind = Body::Bytes;
    std::string_view body;        // Bytes
    uint64_t content_length = 0;  // Sized
    // Non-null: trailer fields follow the body, on HTTP/1.1 in the last chunk, so the body is
    // chunked whatever its kind (HTTP/1.0 has no chunked coding: they are dropped there). The
    // fields present when the head is written are announced in a Trailer field; more may be
    // added before the body ends (append_last_chunk sends what is there then).
    const std::vector<std::pair<std::string, std::string>>* trailers = nullptr;
};

// Whether a trailer field may be named `name` (RFC 9110 §6.5.1): not the fields that frame,
// route or control the message (Content-Length, Transfer-Encoding, Host, Connection, TE,
// Trailer, Content-Type, Cache-Control, Set-Cookie, ...), which a recipient would have needed
// before the body. Case-insensitive; says nothing of whether `name` is a token.
bool trailer_field_allowed(std::string_view name);

// Whether a field value holds CR, LF or NUL, the bytes that would end the field (or the head)
// early: what the layer above refuses before a value reaches the writer, which copies as given.
bool field_value_forbidden(std::string_view value);

// 1xx, 204 and 304 answers have no body (RFC 9110 §6.4.1); every other status may.
constexpr bool status_has_body(int status) {
    return status >= 200 && status != 204 && status != 304;
}

// Holds "Date: <IMF-fixdate>\r\nServer: rivet\r\n", re-formatted when the second changes.
class DateCache {
public:
    std::string_view block(int64_t unix_seconds);

private:
    int64_t second_ = -1;
    char buf_[64];
    size_t len_ = 0;
};

// Formats `unix_seconds` as an IMF-fixdate ("Sun, 06 Nov 1994 08:49:37 GMT") into `out` (29 chars).
void format_http_date(int64_t unix_seconds, char out[29]);

std::string_view status_reason(int status);

// How the response must be framed for the request it answers.
struct Framing {
    bool head_only = false;     // HEAD: fields as for GET, no body
    bool keep_alive = true;     // false: "Connection: close", the connection ends after it
    uint8_t version_minor = 1;  // of the request: 1.0 needs "Connection: keep-alive" to keep it
};

// Whether `res`'s body is sent with chunked coding for `framing`'s request: a Streamed body or
// one with trailers, on HTTP/1.1, when the status has a body (HEAD gets the same head, no body).
bool chunked_body(const ResponseHead& res, const Framing& framing);

// Appends the status line, fields and (unless HEAD, 1xx, 204 or 304) the body of `res`.
// For a Sized body only the head is written; the caller sends the bytes. For a Streamed one only
// the head is written (with Transfer-Encoding: chunked on 1.1); the body follows with
// append_chunk / append_last_chunk. With trailers on 1.1 (chunked_body): a Bytes body is one
// chunk and the last chunk with the trailers; a Sized one's head ends with the size line of its
// one chunk, and after its bytes the caller appends append_file_chunk_end (for an empty one
// the last chunk is written here).
void write_response(std::string& out, const ResponseHead& res, const Framing& framing,
                    std::string_view date_block);

// A minimal response for protocol errors and server-made answers (400, 404, 503, ...).
void write_simple_response(std::string& out, int status, std::string_view body,
                           const Framing& framing, std::string_view date_block,
                           std::string_view extra_fields = {});

void append_chunk(std::string& out, std::string_view data);  // nothing for empty data
void append_last_chunk(std::string& out);
// The last chunk with trailer fields: "0\r\n" "name: value\r\n"... "\r\n".
void append_last_chunk(std::string& out,
                       std::span<const std::pair<std::string, std::string>> trailers);
// After the bytes of a chunked Sized body: the end of its chunk and the last chunk.
void append_file_chunk_end(std::string& out,
                           std::span<const std::pair<std::string, std::string>> trailers);

}  // namespace rivet::http
