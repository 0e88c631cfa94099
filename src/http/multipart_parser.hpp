// multipart/form-data (RFC 7578 over RFC 2046's multipart syntax): an incremental parser fed the
// body in pieces of any size, with no sockets and nothing held but a part's header block and at
// most one delimiter's length of bytes that may be the start of a boundary. A part's content is
// handed on as it arrives, so a file of any size passes through in bounded memory.
//
//   MultipartParser p(boundary, limits);
//   for each piece: if (p.feed(piece, handler) != MultipartParser::Status::Ok) stop;
//   at the end:     p.finish()   (Malformed unless the closing delimiter was seen)
#pragma once

#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

namespace rivet::http {

// The boundary parameter of a `multipart/form-data; boundary=...` Content-Type (quoted or a
// token), checked against RFC 2046's bchars and 1..70 length; nullopt when the type is not
// multipart/form-data or the boundary is missing or invalid.
std::optional<std::string> multipart_boundary(std::string_view content_type);

// What a part's header block says, parsed: Content-Disposition's name and filename (as sent:
// the caller must sanitize it before using it as a path) and Content-Type.
struct PartHead {
    std::string name;
    std::optional<std::string> filename;  // present (possibly empty) for file parts
    std::string content_type;             // "text/plain" when absent (RFC 7578 §4.4)
};

struct MultipartLimits {
    size_t max_parts = 1000;
    size_t max_header_bytes = 8 * 1024;  // one part's header block, CRLFs included
};

// The caller's side: each returns false to stop the parse (feed then returns Stopped).
class MultipartHandler {
public:
    virtual bool on_part_begin(const PartHead& head) = 0;
    virtual bool on_part_data(std::string_view bytes) = 0;  // any number of times, maybe none
    virtual bool on_part_end() = 0;

protected:
    ~MultipartHandler() = default;
};

class MultipartParser {
public:
    enum class Status : uint8_t {
        Ok,              // fed; more may come (or the closing delimiter was seen: done())
        Stopped,         // the handler returned false
        TooManyParts,    // limits.max_parts crossed
        HeaderTooLarge,  // a part's header block over limits.max_header_bytes
        Malformed,       // error() says what
    };

    MultipartParser(std::string_view boundary, MultipartLimits limits);

    Status feed(std::string_view piece, MultipartHandler& handler);
    // The body has ended: Ok when the closing delimiter was seen, Malformed otherwise.
    Status finish();
    bool done() const { return state_ == State::Epilogue; }
    const std::string& error() const { return error_; }  // why Malformed

private:
    // Where in the body the next byte belongs.
    enum class State : uint8_t {
        Preamble,      // before the first delimiter: dropped
        DelimiterEnd,  // after a delimiter's bytes: "--" (the close) or padding then CRLF
        Padding,       // LWSP after them, before the line's CRLF
        PaddingLf,     // the CR of that line was seen
        CloseDash,     // one '-' of the closing "--" seen
        Headers,       // a part's header block
        Content,       // a part's content
        Epilogue,      // after the closing delimiter: dropped
        Failed,
    };

    Status scan_content(std::string_view& in, MultipartHandler& handler);
    Status delimiter_found(MultipartHandler& handler);
    Status delimiter_line(std::string_view& in, MultipartHandler& handler);
    bool delimiter_confirmed(MultipartHandler& handler);
    Status not_a_delimiter(MultipartHandler& handler);
    Status take_headers(std::string_view& in, MultipartHandler& handler);
    Status fail(std::string why);
    bool emit(std::string_view bytes, MultipartHandler& handler);

    std::string delimiter_;  // CRLF "--" boundary: what ends a part's content
    MultipartLimits limits_;
    State state_ = State::Preamble;
    std::string held_;  // a prefix of delimiter_ at the end of what was fed; may be content
    std::string line_;  // a delimiter line's bytes until it is known to be one
    State resume_ = State::Preamble;  // where a delimiter line that is not one goes back to
    std::string headers_;             // the header block so far
    size_t parts_ = 0;
    std::string error_;
};

}  // namespace rivet::http
