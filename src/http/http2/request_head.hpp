// HTTP/2's side of a request head: the connection preface, and a request's header list (as HPACK
// decoded it) turned into the RequestHead every protocol shares, so that routing, middleware and
// the application never ask which protocol a request came by. Framing and HPACK are libnghttp2's
// (engine/http2/); nothing here knows of it or of sockets.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "http/request_parser.hpp"

namespace rivet::http::http2 {

// What a client sends first on a connection that speaks HTTP/2 (RFC 9113 §3.4). No HTTP/1.1
// request starts like it, so the plain port can serve both (h2c by prior knowledge).
inline constexpr std::string_view kPreface = "PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n";
enum class PrefaceMatch : uint8_t { No, Partial, Full };
// Full: `data` starts with the whole preface; Partial: it is a proper prefix of it.
PrefaceMatch match_preface(std::string_view data);

// Fields of an HTTP/1.1 answer that are the connection's, not the message's (RFC 9113 §8.2.2):
// never sent on an HTTP/2 stream. Case-insensitive.
bool connection_specific(std::string_view name);

// A request's header list, field by field, into one buffer; then a RequestHead whose views point
// into it. The validation of RFC 9113 §8.3 (pseudo-fields present, once, first; lowercase names;
// no connection-specific fields) is the framing layer's; this one keeps count of the bytes.
class RequestHeadBuilder {
public:
    // Counts as the header list size does (RFC 9113 §6.5.2: name + value + 32 per field).
    static constexpr size_t kFieldOverhead = 32;

    void add(std::string_view name, std::string_view value);
    size_t list_size() const { return list_size_; }
    // Empty again for the next request, its buffers kept (up to a bound).
    void clear();
    // Builds `head` (its fields in `fields`). `body_follows`: DATA frames come after the HEADERS
    // (no END_STREAM on them). Returns 0, or the status to refuse the request with (400: a
    // Content-Length that is not a number).
    int finish(RequestHead& head, std::vector<Header>& fields, bool body_follows);
    // The bytes every view of the head points into (BodyStream copies and rebases them).
    std::string_view storage() const { return storage_; }

private:
    struct Span {
        uint32_t offset, size;
    };
    struct Field {
        Span name, value;
    };
    std::string_view at(Span s) const { return {storage_.data() + s.offset, s.size}; }
    Span keep(std::string_view bytes);

    std::string storage_;
    std::vector<Field> fields_;
    Span method_{}, scheme_{}, authority_{}, path_{};
    size_t list_size_ = 0;
};

}  // namespace rivet::http::http2
