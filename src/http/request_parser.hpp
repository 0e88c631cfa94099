// RequestParser: the HTTP/1.1 request head parser (RFC 9112), zero-copy and allocation-free.
//
// One call, picohttpparser style: hand it the bytes received so far; it either needs more, rejects
// the request (with the status code to answer), or returns how many bytes the head took. Every
// string in the result is a view into the caller's buffer, valid while that buffer is unchanged.
// The parser keeps no state between calls: a caller re-parses the growing buffer from its start
// (one forward pass: some 100 ns for a small head, 250 ns for a 700-byte one), and gets the same
// answer however the bytes were split. Rules are strict where framing is at stake (RFC 9112 §6,
// §11): CRLF only, no obs-fold, no bare CR, one Content-Length value, chunked last and alone; see
// request_parser.cpp.
#pragma once

#include <cstddef>
#include <cstdint>
#include <span>
#include <string_view>

namespace rivet::http {

enum class Method : uint8_t { Get, Head, Post, Put, Delete, Options, Patch, Trace, Connect, Other };

struct Header {
    std::string_view name;   // as sent (case preserved)
    std::string_view value;  // leading and trailing whitespace removed
};

// Size limits; each one crossed gives its own status code.
struct ParserLimits {
    size_t max_request_line = 8 * 1024;   // 414 URI Too Long (empty lines before it count)
    size_t max_header_bytes = 16 * 1024;  // 431 (whole header block, after the request line,
                                          // up to and including the final empty line)
    size_t max_headers = 100;             // 431
    uint64_t max_body = 8 * 1024 * 1024;  // 413 (checked against Content-Length here; chunked by
                                          // the ChunkedDecoder)
};

enum class BodyFraming : uint8_t { None, ContentLength, Chunked };

struct RequestHead {
    std::string_view method_name;  // as sent, e.g. "GET"
    Method method = Method::Other;
    std::string_view target;     // the request-target as sent
    std::string_view path;       // "/a/b" of origin-form or absolute-form ("/" if empty there);
                                 // "*" for OPTIONS *; empty for CONNECT. Ends before any '#'.
    std::string_view query;      // the part after '?', without the '?' (nor any '#...'); or empty
    std::string_view authority;  // host[:port] of absolute- or authority-form, else Host
    uint8_t version_minor = 1;   // HTTP/1.<minor>; only 0 and 1 are accepted
    std::span<const Header> headers;  // views into the caller's header storage
    BodyFraming framing = BodyFraming::None;
    uint64_t content_length = 0;   // when framing == ContentLength
    bool keep_alive = true;        // after the version default and the Connection field
    bool expect_continue = false;  // Expect: 100-continue
};

struct ParseResult {
    enum Kind : uint8_t { Complete, Incomplete, Error } kind = Incomplete;
    size_t head_bytes = 0;    // Complete: bytes taken by the request line and header block
                              // (and any empty lines before them): where the body starts
    int status = 0;           // Error: 400, 413, 414, 417, 431, 501 or 505
    const char* reason = "";  // Error: a short static description, e.g. "invalid header name"

    static ParseResult complete(size_t n) { return {Complete, n, 0, ""}; }
    static ParseResult incomplete() { return {}; }
    static ParseResult error(int status, const char* reason) { return {Error, 0, status, reason}; }
};

// Parses the request head at the start of `data`.
// - `headers_storage` receives the fields; more fields than it holds (or than
//   limits.max_headers) is a 431.
// - `scanned` is how many bytes of `data` an earlier call already saw without finding the end of
//   the head (0 on the first call). The single validating pass has no separate search for the
//   end of the head for it to shorten, so it is accepted and ignored; results never depend on it.
// - The 400s of malformed lines come first (at the byte that proves them, even in an incomplete
//   prefix), then, once the head is complete: missing Host (400), 501, 413, 417.
// Errors visible in an incomplete prefix are reported at once, so garbage is refused early.
ParseResult parse_request_head(std::string_view data, RequestHead& out,
                               std::span<Header> headers_storage, const ParserLimits& limits,
                               size_t scanned = 0);

// Case-insensitive ASCII comparison, for field names and tokens.
bool iequals(std::string_view a, std::string_view b);

// Looks up a header in a parsed head (first match, case-insensitive); empty view if absent.
std::string_view find_header(const RequestHead& head, std::string_view name);

std::string_view method_name(Method m);

}  // namespace rivet::http
