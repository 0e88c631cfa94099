// BodyDecoder: one request body after its head, as the head's framing says (RFC 9112 §6): a
// Content-Length body is counted off, a chunked one decoded (ChunkedDecoder). The one decoder of
// request bodies: the engine's buffered bodies (BodyReader) and streamed ones (BodyStream) differ
// only in where the payload goes, the sink the caller passes. Fed each byte once, as it arrives.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>

#include "http/chunked_decoder.hpp"
#include "http/request_parser.hpp"

namespace rivet::http {

class BodyDecoder {
public:
    using Result = ChunkedDecoder::Result;

    // `limit`: the decoded size over which a chunked body is refused (413); a Content-Length is
    // checked against it up front, before any of the body is read.
    BodyDecoder(BodyFraming framing, uint64_t content_length, uint64_t limit)
        : framing_(framing), remaining_(content_length), chunked_(limit) {}

    // Decodes what `in` holds. The payload is appended to `sink` (a chunked body needs one: its
    // decoded bytes exist nowhere else); for a Content-Length body the sink may be null, and its
    // bytes stay where they are (the caller's buffer holds them, `consumed` of them from the
    // start of `in`). Done: `consumed` is where the next request starts. After Done or an
    // Error, later calls repeat it and consume nothing.
    Result feed(std::string_view in, std::string* sink);

    bool chunked() const { return framing_ == BodyFraming::Chunked; }
    uint64_t received() const { return received_; }  // payload bytes so far

private:
    BodyFraming framing_;
    uint64_t remaining_;  // Content-Length: bytes still to come
    uint64_t received_ = 0;
    ChunkedDecoder chunked_;
};

}  // namespace rivet::http
