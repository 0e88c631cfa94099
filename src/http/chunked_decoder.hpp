// ChunkedDecoder: the "chunked" transfer coding of a request body (RFC 9112 §7.1), incremental.
//
// Feed it the bytes that follow the request head as they arrive; it appends the decoded payload
// to a caller's string and says when the last chunk and the trailer section have been read.
// Chunk extensions are parsed (and ignored); trailer fields are validated and dropped. Line ends
// are strict CRLF: a bare CR or LF is an error, as are whitespace between the size and its CR and
// chunk-size lines longer than kMaxSizeLine bytes.
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
        size_t consumed = 0;      // bytes of the input taken (all of it on NeedMore); on Error, the
                                  // offset of the byte that was refused
        int status = 0;           // Error: 400 (malformed), 413 (body over max_body) or 431
                                  // (trailer section over max_trailer_bytes)
        const char* reason = "";  // Error: short static description
    };

    static constexpr size_t kMaxSizeLine = 4096;  // chunk size plus extensions, CRLF excluded

    explicit ChunkedDecoder(uint64_t max_body = 8 * 1024 * 1024,
                            size_t max_trailer_bytes = 16 * 1024)
        : max_body_(max_body), max_trailer_bytes_(max_trailer_bytes) {}

    // Decodes as much of `in` as possible, appending payload bytes to `body`.
    // On Done, `consumed` is where the next pipelined request starts; later calls answer Done
    // with nothing consumed until reset(). After an Error, later calls repeat it.
    Result feed(std::string_view in, std::string& body);

    void reset();  // ready for a new body; keeps the limits

private:
    enum class State : uint8_t {
        Size,          // hex digits of the chunk size
        ExtStart,      // after ';': optional whitespace, then an extension name
        ExtName,       // in the name
        ExtNameEnd,    // whitespace after the name: '=' or ';' must follow
        ExtValStart,   // after '=': optional whitespace, then a token or a quoted string
        ExtToken,      // in a token value
        ExtQuoted,     // in a quoted value
        ExtQuotedEsc,  // after a backslash in a quoted value
        ExtQuotedEnd,  // after the closing quote: ';', CR or whitespace
        ExtWs,         // whitespace after a value: ';' must follow
        SizeLF,        // CR seen at the end of the size line
        Data,          // chunk_left_ payload bytes to go
        DataCR,
        DataLF,
        TrailerStart,  // at the start of a trailer line (or the final CRLF)
        TrailerName,
        TrailerValue,
        TrailerLF,
        LastLF,  // CR of the final empty line seen
        Finished,
        Failed,
    };
    Result fail(size_t at, int status, const char* reason);

    State state_ = State::Size;
    uint64_t chunk_left_ = 0;
    uint64_t total_ = 0;
    size_t size_digits_ = 0;
    size_t line_bytes_ = 0;  // of the current chunk-size line, extensions included
    size_t trailer_bytes_ = 0;
    uint64_t max_body_;
    size_t max_trailer_bytes_;
    int error_status_ = 0;  // Failed: the error, repeated to later calls
    const char* error_reason_ = "";
};

}  // namespace rivet::http
