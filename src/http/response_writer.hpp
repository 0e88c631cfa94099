// ResponseWriter: serializes responses into a connection's output bytes (RFC 9112 §4-6).
//
// The writer knows responses only as a ResponseHead of views, which the layer above fills from
// its own response type, so the protocol layer depends on no API above it. The Date and Server
// fields are formatted once per second per loop (DateCache) and copied as one block; everything
// else is appended straight into the caller's output string.
#pragma once

#include <cstdint>
#include <span>
#include <string>
#include <string_view>
#include <utility>

namespace rivet::http {

// What the writer needs of a response. Views: valid for the call only.
struct ResponseHead {
    enum class Body : uint8_t {
        Bytes,     // `body` follows the head (Content-Length: its size)
        Sized,     // `content_length` bytes the caller sends after the head (a file)
        Streamed,  // an unknown length: chunked on HTTP/1.1, until the close on HTTP/1.0
    };
    int status = 200;
    std::string_view content_type;                                // omitted when empty
    std::span<const std::pair<std::string, std::string>> fields;  // validated by the caller
    Body body_kind = Body::Bytes;
    std::string_view body;        // Bytes
    uint64_t content_length = 0;  // Sized
};

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

// Appends the status line, fields and (unless HEAD, 1xx, 204 or 304) the body of `res`.
// For a Sized body only the head is written; the caller sends the bytes. For a Streamed one only
// the head is written (with Transfer-Encoding: chunked on 1.1); the body follows with
// append_chunk / append_last_chunk.
void write_response(std::string& out, const ResponseHead& res, const Framing& framing,
                    std::string_view date_block);

// A minimal response for protocol errors and server-made answers (400, 404, 503, ...).
void write_simple_response(std::string& out, int status, std::string_view body,
                           const Framing& framing, std::string_view date_block,
                           std::string_view extra_fields = {});

void append_chunk(std::string& out, std::string_view data);  // nothing for empty data
void append_last_chunk(std::string& out);

}  // namespace rivet::http
