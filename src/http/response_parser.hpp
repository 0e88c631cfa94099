// The HTTP/1.1 response head parser (RFC 9112 §4, §6), for rivet's HTTP client: as strict as the
// request parser where framing is at stake, zero-copy and allocation-free.
//
// One call: hand it the bytes received so far; it needs more, refuses the response, or says how
// many bytes the head took. Every view in the result points into the caller's buffer. Rules:
// CRLF only, no bare CR, no obs-fold, no whitespace before a field's colon, one Content-Length
// value (repeats must agree), chunked the only transfer coding and alone, never both
// Transfer-Encoding and Content-Length (a response that could be read two ways is refused, not
// guessed at), no Transfer-Encoding in an HTTP/1.0 response. Errors carry status 502 (what a
// gateway answers for an upstream's malformed response) and a short static reason.
#pragma once

#include <cstddef>
#include <cstdint>
#include <span>
#include <string_view>

#include "http/request_parser.hpp"

namespace rivet::http {

struct ResponseLimits {
    size_t max_status_line = 8 * 1024;    // the status line, its CRLF excluded
    size_t max_header_bytes = 64 * 1024;  // the field block, its final empty line included
    size_t max_headers = 100;
};

// How the body after a response head is delimited (RFC 9112 §6.3).
enum class ResponseBody : uint8_t {
    None,           // HEAD, 1xx, 204, 304: no body whatever the fields say
    ContentLength,  // exactly content_length bytes
    Chunked,        // the chunked coding (ChunkedDecoder / BodyDecoder)
    UntilClose,     // neither: the body ends when the server closes the connection
};

struct ResponseHead {
    uint8_t version_minor = 1;  // HTTP/1.<minor>: 0 or 1 (later minors read as 1)
    int status = 0;             // 100..599
    std::string_view reason;    // may be empty
    std::span<const Header> headers;
    ResponseBody body = ResponseBody::None;
    uint64_t content_length = 0;  // when body == ContentLength
    bool keep_alive = false;      // the connection may carry another request after this one

    bool interim() const { return status < 200; }  // 1xx: a final response follows
};

// Parses the response head at the start of `data`. `head_request`: the request was HEAD (its
// response has no body). Errors in a prefix are reported as soon as the bytes proving them are
// there; a head over its limits is refused once a byte past them is.
ParseResult parse_response_head(std::string_view data, bool head_request, ResponseHead& out,
                                std::span<Header> headers_storage,
                                const ResponseLimits& limits = {});

// BodyFraming for a BodyDecoder of this head's body (None for None and UntilClose).
inline BodyFraming decoder_framing(ResponseBody b) {
    return b == ResponseBody::ContentLength ? BodyFraming::ContentLength
           : b == ResponseBody::Chunked     ? BodyFraming::Chunked
                                            : BodyFraming::None;
}

}  // namespace rivet::http
