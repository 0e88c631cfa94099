// RequestParser: the HTTP/1.1 request head parser (RFC 9112), zero-copy and allocation-free.
//
// One call, picohttpparser style: hand it the bytes received so far; it either needs more, rejects
// the request (with the status code to answer), or returns how many bytes the head took. Every
// string in the result is a view into the caller's buffer, valid while that buffer is unchanged.
// A head is validated in one forward pass (some 100 ns for a small head, 250 ns for a 700-byte
// one). A caller that feeds a growing head again keeps a HeadScan: the next call then looks for
// the end of the head only in the new bytes, and runs the validating pass again only when the
// end has arrived, a limit may have been crossed, or the bytes have doubled since the last pass,
// so a head that trickles in a byte at a time costs linear work, not quadratic. The answer is
// the same however the bytes were split. Rules are strict where framing is at stake (RFC 9112
// §6, §11): CRLF only, no obs-fold, no bare CR, one Content-Length value, chunked last and alone;
// see request_parser.cpp.
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
                                 // "*" for OPTIONS *; empty for CONNECT. ('#' is refused.)
    std::string_view query;      // the part after '?', without the '?' (nor any '#...'); or empty
    std::string_view authority;  // host[:port] of absolute- or authority-form, else Host
    uint8_t version_minor = 1;   // HTTP/1.<minor>; only 0 and 1 are accepted
    uint8_t version_major = 1;   // 2: an HTTP/2 stream's request (engine/http2/), minor 0
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
    size_t examined = 0;      // bytes this call looked at (at most): the cost of the call

    static ParseResult complete(size_t n) { return {Complete, n, 0, "", 0}; }
    static ParseResult incomplete() { return {}; }
    static ParseResult error(int status, const char* reason) {
        return {Error, 0, status, reason, 0};
    }
};

// Where the scan of an unfinished head stopped; the caller keeps it between calls for one head
// (the same bytes, growing) and starts a new one for the next head.
struct HeadScan {
    uint32_t searched = 0;   // leading bytes known to hold no complete head
    uint32_t validated = 0;  // bytes the last validating pass checked and found no error in
};

// Parses the request head at the start of `data`.
// - `out` may hold an earlier head (a session parses a batch into one): a complete head sets
//   every field of it but version_major, which only HTTP/2 sets; after an error or an
//   incomplete head its fields are unspecified.
// - `headers_storage` receives the fields; more fields than it holds (or than
//   limits.max_headers) is a 431.
// - `scan`, when given, carries the progress on this head from one call to the next (see above);
//   it is updated on Incomplete and left as it was otherwise.
// - The 400s of malformed lines come first (at the byte that proves them, even in an incomplete
//   prefix; a method over 32 bytes is a 501 at its 33rd), then, once the head is complete:
//   missing or (for an origin-form target) empty Host (400), 501 (CONNECT, which rivet does
//   not tunnel; an unknown transfer coding), 413, 417.
// Errors visible in the first bytes are reported at once, so garbage is refused early; in a head
// that arrives in pieces, by the time its bytes have doubled or it could cross a limit.
ParseResult parse_request_head(std::string_view data, RequestHead& out,
                               std::span<Header> headers_storage, const ParserLimits& limits,
                               HeadScan* scan = nullptr);

// Case-insensitive ASCII comparison, for field names and tokens. Most comparisons fail on the
// length or the first byte (a list of fields searched for one name), which is tested here, inline:
// two bytes equal but for case differ at most in bit 0x20. The rest is compared out of line.
bool iequals_same_size(std::string_view a, std::string_view b);  // a.size() == b.size() only
inline bool iequals(std::string_view a, std::string_view b) {
    return a.size() == b.size() && (a.empty() || ((a[0] ^ b[0]) & ~0x20) == 0) &&
           iequals_same_size(a, b);
}

// tchar of RFC 9110 §5.6.2 (methods, field names), and a whole non-empty token.
bool is_token_char(unsigned char c);
bool is_token(std::string_view s);

// The first field named `name` (case-insensitive), or an empty view.
std::string_view find_header(std::span<const Header> headers, std::string_view name);
inline std::string_view find_header(const RequestHead& head, std::string_view name) {
    return find_header(head.headers, name);
}

std::string_view method_name(Method m);
Method method_from_name(std::string_view name);  // Other when not one of the enum's
// A Content-Length value: digits only, no overflow.
bool parse_content_length(std::string_view value, uint64_t& out);

}  // namespace rivet::http
