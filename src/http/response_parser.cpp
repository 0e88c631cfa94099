// The response head parser: one forward pass, each byte checked as it is read, so an error is
// reported at the byte that proves it and a head split anywhere gives the same answer (the
// request parser's discipline; see request_parser.cpp).
#include "http/response_parser.hpp"

#include <algorithm>
#include <limits>

#include "http/byte_scan.hpp"
#include "http/field_block.hpp"

namespace rivet::http {

namespace {

using namespace byte_scan;

constexpr int kBad = 502;

ParseResult bad(const char* why) {
    return ParseResult::error(kBad, why);
}

// Calls f on each non-empty element of a comma-separated list; stops when f returns false.
template <class F>
void each_element(std::string_view list, F&& f) {
    for (;;) {
        const size_t comma = list.find(',');
        const std::string_view e = trim_ows(list.substr(0, comma));
        if (!e.empty() && !f(e)) return;
        if (comma == std::string_view::npos) return;
        list.remove_prefix(comma + 1);
    }
}

struct Fields {
    uint64_t content_length = 0;
    bool has_length = false, has_coding = false, chunked = false;
    bool close = false, keep_alive = false;
};

// Applies one field line; returns why it makes the response unreadable, or nullptr.
const char* apply_field(std::string_view name, std::string_view v, Fields& f, uint8_t minor) {
    if (name.size() == 10 && lit_iequals(name, "connection")) {
        each_element(v, [&](std::string_view opt) {
            if (lit_iequals(opt, "close")) f.close = true;
            if (lit_iequals(opt, "keep-alive")) f.keep_alive = true;
            return true;
        });
    } else if (name.size() == 14 && lit_iequals(name, "content-length")) {
        if (f.has_coding) return "both Transfer-Encoding and Content-Length";
        uint64_t n = 0;
        if (!parse_content_length(v, n)) return "invalid Content-Length";
        if (f.has_length && n != f.content_length) return "conflicting Content-Length";
        f.has_length = true;
        f.content_length = n;
    } else if (name.size() == 17 && lit_iequals(name, "transfer-encoding")) {
        if (minor == 0) return "Transfer-Encoding in an HTTP/1.0 response";
        if (f.has_length) return "both Transfer-Encoding and Content-Length";
        f.has_coding = true;
        const char* why = nullptr;
        each_element(v, [&](std::string_view coding) {
            if (f.chunked)
                why = "chunked is not the final transfer coding";
            else if (!lit_iequals(coding, "chunked"))
                why = "transfer coding not implemented";  // gzip etc.: never asked for
            else
                f.chunked = true;
            return why == nullptr;
        });
        return why;
    }
    return nullptr;
}

}  // namespace

ParseResult parse_response_head(std::string_view data, bool head_request, ResponseHead& out,
                                std::span<Header> headers_storage, const ResponseLimits& limits) {
    const auto* s = reinterpret_cast<const unsigned char*>(data.data());
    const size_t n = data.size();
    const auto view = [&](size_t from, size_t to) {
        return std::string_view(data.data() + from, to - from);
    };
    const auto sat_add = [](size_t a, size_t b) {
        return a > std::numeric_limits<size_t>::max() - b ? std::numeric_limits<size_t>::max()
                                                          : a + b;
    };
    // Running out of input below a limit means "wait"; a byte needed at or past it, refusal.
    const auto short_of = [n](size_t cap, const char* why) {
        return cap <= n ? bad(why) : ParseResult::incomplete();
    };

    // Status line: HTTP/1.x SP 3DIGIT SP reason CRLF, checked byte by byte so a wrong prefix is
    // refused at once (a server that answers in HTTP/0.9 or another protocol).
    constexpr std::string_view kProto = "HTTP/1.";
    size_t i = 0;
    for (; i < kProto.size(); ++i) {
        if (i == n) return ParseResult::incomplete();
        if (s[i] != static_cast<unsigned char>(kProto[i])) return bad("invalid HTTP version");
    }
    if (i == n) return ParseResult::incomplete();
    if (s[i] - unsigned('0') >= 10u) return bad("invalid HTTP version");
    out.version_minor = s[i] == '0' ? 0 : 1;
    ++i;
    if (i == n) return ParseResult::incomplete();
    if (s[i] != ' ') return bad("invalid status line");
    ++i;
    int status = 0;
    for (size_t k = 0; k < 3; ++k, ++i) {
        if (i == n) return ParseResult::incomplete();
        if (s[i] - unsigned('0') >= 10u) return bad("invalid status code");
        status = status * 10 + (s[i] - '0');
    }
    if (status < 100 || status > 599) return bad("invalid status code");
    out.status = status;
    if (i == n) return ParseResult::incomplete();
    if (s[i] != ' ') return bad("invalid status line");
    ++i;
    // The limit counts from the line's first byte; "HTTP/1.1 200 " always fits.
    const size_t sl_cap = sat_add(std::max<size_t>(limits.max_status_line, i), 1);
    const size_t sl_stop = std::min(n, sl_cap);
    const size_t r0 = i;
    i = scan_value(s, i, sl_stop);
    if (i == sl_stop) return short_of(sl_cap, "status line too long");
    if (s[i] != '\r') return bad("invalid character in reason phrase");
    out.reason = view(r0, i);
    if (++i == n) return ParseResult::incomplete();
    if (s[i] != '\n') return bad("bare CR");
    ++i;

    const size_t hb_cap = sat_add(i, limits.max_header_bytes);
    const size_t stop = std::min(n, hb_cap);
    const size_t max_fields = std::min(limits.max_headers, headers_storage.size());
    Fields f;
    const FieldBlock block = scan_field_block(
        s, i, stop, max_fields, [&](size_t index, std::string_view name, std::string_view value) {
            headers_storage[index] = {name, value};
            return apply_field(name, value, f, out.version_minor);
        });
    switch (block.end) {
        case FieldBlockEnd::Complete:
            break;
        case FieldBlockEnd::OutOfInput:
            return short_of(hb_cap, "header section too large");
        case FieldBlockEnd::TooMany:
            return bad("too many header fields");
        case FieldBlockEnd::Malformed:
            return bad(block.why);
    }
    i = block.next;
    out.headers = headers_storage.first(block.count);

    // RFC 9112 §6.3, in its order.
    out.content_length = 0;
    out.keep_alive = !f.close && (out.version_minor == 1 || f.keep_alive);
    if (head_request || status < 200 || status == 204 || status == 304) {
        // A 204 or 1xx that claims a body is malformed (RFC 9110 §8.6, §15.3.5); HEAD and 304
        // may carry the length of the body they stand for.
        if ((status < 200 || status == 204) && (f.has_coding || (f.has_length && f.content_length)))
            return bad("body framing on a response that has no body");
        out.body = ResponseBody::None;
    } else if (f.has_coding) {
        if (!f.chunked) return bad("empty Transfer-Encoding");
        out.body = ResponseBody::Chunked;
    } else if (f.has_length) {
        out.body = ResponseBody::ContentLength;
        out.content_length = f.content_length;
    } else {
        out.body = ResponseBody::UntilClose;
        out.keep_alive = false;
    }
    return ParseResult::complete(i);
}

}  // namespace rivet::http
