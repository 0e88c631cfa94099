// ChunkedDecoder: the "chunked" transfer coding of a request body (RFC 9112 §7.1), incremental.
//
// Feed it the bytes that follow the request head as they arrive; it appends the decoded payload
// to a caller's string and says when the last chunk and the trailer section have been read.
// Chunk extensions are parsed (and ignored); trailer fields are validated and dropped.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>

namespace rivet::http {

class ChunkedDecoder {
public:
    struct Result {
        enum Kind : uint8_t { NeedMore, Done, Error } kind = NeedMore;
        size_t consumed = 0;      // bytes of the input taken (all of it on NeedMore)
        int status = 0;           // Error: 400 (malformed) or 413 (body over max_body)
        const char* reason = "";  // Error: short static description
    };

    explicit ChunkedDecoder(uint64_t max_body = 8 * 1024 * 1024, size_t max_trailer_bytes = 16 * 1024)
        : max_body_(max_body), max_trailer_bytes_(max_trailer_bytes) {}

    // Decodes as much of `in` as possible, appending payload bytes to `body`.
    // On Done, `consumed` is where the next pipelined request starts.
    Result feed(std::string_view in, std::string& body);

    void reset();  // ready for a new body; keeps the limits

private:
    enum class State : uint8_t {
        Size, Ext, SizeLF, Data, DataCR, DataLF, TrailerStart, Trailer, TrailerLF, LastLF, Finished
    };
    State state_ = State::Size;
    uint64_t chunk_left_ = 0;
    uint64_t total_ = 0;
    size_t size_digits_ = 0;
    size_t trailer_bytes_ = 0;
    uint64_t max_body_;
    size_t max_trailer_bytes_;
};

}  // namespace rivet::http
