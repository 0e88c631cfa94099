// The request head parser: one forward pass that validates each byte as it reads it. Because it
// checks in byte order and every check depends only on bytes already read, an error is reported
// as soon as the bytes that prove it have arrived, and a head split anywhere gives the same answer.
//
// Errors found inside a line (bad characters, limits) are reported at the offending byte; rules
// about a field's meaning (framing, Host) when its line is complete; rules about the head as a
// whole (missing Host, 501, 413, 417) only once it is complete, so a malformed head gets its 400
// first and a well-formed but unacceptable one gets the specific status.
#include "http/request_parser.hpp"

#include <algorithm>
#include <cstring>
#include <iterator>
#include <limits>

#include "http/byte_scan.hpp"
#include "http/field_block.hpp"

namespace rivet::http {
bool parse_content_length(std::string_view v, uint64_t& out) {
    if (v.empty()) return false;
    uint64_t n = 0;
    for (const char c : v) {
        if (c < '0' || c > '9') return false;
        const unsigned d = static_cast<unsigned>(c - '0');
        if (n > (std::numeric_limits<uint64_t>::max() - d) / 10) return false;
        n = n * 10 + d;
    }
    out = n;
    return true;
}

Method method_from_name(std::string_view m) {
    switch (m.size()) {
        case 3:
            return m == "GET" ? Method::Get : m == "PUT" ? Method::Put : Method::Other;
        case 4:
            return m == "POST" ? Method::Post : m == "HEAD" ? Method::Head : Method::Other;
        case 5:
            return m == "PATCH" ? Method::Patch : m == "TRACE" ? Method::Trace : Method::Other;
        case 6:
            return m == "DELETE" ? Method::Delete : Method::Other;
        case 7:
            return m == "OPTIONS"   ? Method::Options
                   : m == "CONNECT" ? Method::Connect
                                    : Method::Other;
        default:
            return Method::Other;
    }
}

namespace {

using namespace byte_scan;  // the byte classes and block scanners

// The longest method accepted. The longest registered one (IANA) is 17 bytes
// ("UPDATEREDIRECTREF"); anything past this is refused with 501 at its 33rd byte.
constexpr size_t kMaxMethod = 32;

// Calls f on each element of a comma-separated list, skipping empty ones as RFC 9110 §5.6.1
// asks; stops when f returns false.
template <class F>
bool each_element(std::string_view list, F&& f) {
    for (;;) {
        const size_t comma = list.find(',');
        const std::string_view e = trim_ows(list.substr(0, comma));
        if (!e.empty() && !f(e)) return false;
        if (comma == std::string_view::npos) return true;
        list.remove_prefix(comma + 1);
    }
}

bool valid_host(std::string_view h) {
    return scan_class<kHost>(reinterpret_cast<const unsigned char*>(h.data()), 0, h.size()) ==
           h.size();
}

void split_path_query(std::string_view pq, RequestHead& out) {
    const size_t q = pq.find('?');
    out.path = pq.substr(0, q);
    if (q != std::string_view::npos) out.query = pq.substr(q + 1);
    if (out.path.empty()) out.path = "/";  // absolute-form with an empty path (RFC 9112 §3.2.1)
}

// The four forms of RFC 9112 §3.2, each allowed only where the RFC allows it. `path_end` is
// where t's first '?' or '#' is, or its size.
const char* classify_target(std::string_view t, size_t path_end, Method m, RequestHead& out) {
    // A fragment is no part of any of the forms (RFC 9112 §3.2): the client keeps it. One that
    // arrives means a client (or a proxy) that does not speak HTTP/1.1 as we read it.
    if (t.find('#', path_end) != std::string_view::npos) return "fragment in request target";
    if (t[0] == '/') {
        if (m == Method::Connect) return "CONNECT needs an authority-form target";
        out.path = t.substr(0, path_end);
        if (path_end < t.size()) out.query = t.substr(path_end + 1);  // after the '?'
        return nullptr;
    }
    if (t == "*") {
        if (m != Method::Options) return "asterisk-form is only for OPTIONS";
        out.path = t;
        return nullptr;
    }
    if (m == Method::Connect) {
        const size_t colon = t.rfind(':');
        if (colon == 0 || colon == std::string_view::npos || colon + 1 == t.size() ||
            !valid_host(t) ||
            t.substr(colon + 1).find_first_not_of("0123456789") != std::string_view::npos)
            return "invalid authority-form target";
        out.authority = t;
        return nullptr;
    }
    size_t scheme = 0;
    if (lit_iequals(t.substr(0, 7), "http://"))
        scheme = 7;
    else if (lit_iequals(t.substr(0, 8), "https://"))
        scheme = 8;
    else
        return "invalid request target";
    const std::string_view rest = t.substr(scheme);
    const std::string_view auth = rest.substr(0, rest.find_first_of("/?#"));
    // userinfo hides the real host from a careless reader (RFC 9110 §4.2.4): refuse it.
    if (auth.find('@') != std::string_view::npos) return "userinfo in request target";
    if (auth.empty() || auth[0] == ':' || !valid_host(auth)) return "invalid authority in target";
    out.authority = auth;
    split_path_query(rest.substr(auth.size()), out);
    return nullptr;
}

// What the field lines said, gathered as each line completes.
struct Fields {
    uint64_t content_length = 0;
    std::string_view host;
    bool has_length = false, has_coding = false, chunked = false, unknown_coding = false;
    bool has_host = false, expect_continue = false, bad_expect = false;
    bool close = false, keep_alive = false;
};

// Applies one field line; returns why it makes the request a 400, or nullptr.
const char* apply_field(std::string_view name, std::string_view v, Fields& f, uint8_t minor) {
    switch (name.size()) {
        case 4:
            if (!lit_iequals(name, "host")) break;
            if (f.has_host) return "more than one Host";
            if (!valid_host(v)) return "invalid Host";
            f.has_host = true;
            f.host = v;
            break;
        case 6:
            if (!lit_iequals(name, "expect")) break;
            // Only 100-continue exists (RFC 9110 §10.1.1); anything else gets its 417 once the
            // head has been checked in full.
            (lit_iequals(v, "100-continue") ? f.expect_continue : f.bad_expect) = true;
            break;
        case 10:
            if (!lit_iequals(name, "connection")) break;
            each_element(v, [&](std::string_view opt) {
                if (lit_iequals(opt, "close"))
                    f.close = true;
                else if (lit_iequals(opt, "keep-alive"))
                    f.keep_alive = true;
                return true;
            });
            break;
        case 14: {
            if (!lit_iequals(name, "content-length")) break;
            // Each of these is a way to smuggle a second request past a proxy that reads the
            // framing differently (RFC 9112 §6.3, §11.2); a list, even "5, 5", is refused too.
            if (f.has_coding) return "both Transfer-Encoding and Content-Length";
            uint64_t n = 0;
            if (!parse_content_length(v, n)) return "invalid Content-Length";
            if (f.has_length && n != f.content_length) return "conflicting Content-Length";
            f.has_length = true;
            f.content_length = n;
            break;
        }
        case 17: {
            if (!lit_iequals(name, "transfer-encoding")) break;
            // RFC 9112 §6.1: an HTTP/1.0 recipient cannot be trusted with it; treat as faulty.
            if (minor == 0) return "Transfer-Encoding in an HTTP/1.0 request";
            if (f.has_length) return "both Transfer-Encoding and Content-Length";
            f.has_coding = true;
            const char* why = nullptr;
            each_element(v, [&](std::string_view coding) {
                size_t k = 0;
                while (k < coding.size() && is(static_cast<unsigned char>(coding[k]), kToken)) ++k;
                const std::string_view params = trim_ows(coding.substr(k));
                if (k == 0 || (!params.empty() && params[0] != ';'))
                    why = "invalid Transfer-Encoding";
                else if (f.chunked)  // chunked must be applied last, and only once (§6.3)
                    why = "chunked is not the final transfer coding";
                else if (!lit_iequals(coding.substr(0, k), "chunked"))
                    f.unknown_coding = true;
                else if (!params.empty())
                    why = "parameters on the chunked coding";
                else
                    f.chunked = true;
                return why == nullptr;
            });
            return why;
        }
        default:
            break;
    }
    return nullptr;
}

}  // namespace

namespace {

// The validating pass over the whole head.
ParseResult validate_head(std::string_view data, RequestHead& out,
                          std::span<Header> headers_storage, const ParserLimits& limits) {
    // What a success may leave unset; the rest is assigned on the way (and is unspecified
    // after an error), which saves clearing the whole struct on the hot path. Three plain
    // stores: a chained assignment made GCC read back the first store, a stall that was 1.3% of
    // a pipelined /hello.
    out.path = {};
    out.query = {};
    out.authority = {};
    const auto* s = reinterpret_cast<const unsigned char*>(data.data());
    const size_t n = data.size();
    const auto view = [&](size_t from, size_t to) {
        return std::string_view(data.data() + from, to - from);
    };
    // A byte needed at or beyond `cap` proves the limit crossed whether or not it has arrived;
    // below it, running out of input only means "wait".
    const auto short_of = [n](size_t cap, int status, const char* why) {
        return cap <= n ? ParseResult::error(status, why) : ParseResult::incomplete();
    };
    const auto sat_add = [](size_t a, size_t b) {
        return a > std::numeric_limits<size_t>::max() - b ? std::numeric_limits<size_t>::max()
                                                          : a + b;
    };
    constexpr const char* kLongLine = "request line too long";

    // Request line. Empty lines before it are skipped (RFC 9112 §2.2) and count toward its
    // limit, so that a stream of CRLFs cannot keep a connection waiting forever.
    size_t i = 0;
    const size_t rl_cap = sat_add(limits.max_request_line, 1);
    const size_t rl_stop = std::min(n, rl_cap);
    while (i < rl_stop && s[i] == '\r') {
        if (i + 1 == rl_stop) return short_of(rl_cap, 414, kLongLine);
        if (s[i + 1] != '\n') return ParseResult::error(400, "bare CR");
        i += 2;
    }
    const size_t m0 = i;
    if (rl_stop - i >= 4 && load4(data.data() + i) == load4("GET ")) {  // most requests
        i += 3;
        out.method_name = view(m0, i);
        out.method = Method::Get;
    } else {
        // A method longer than any we could implement is a 501 (RFC 9112 §3), not a long URI.
        const size_t m_cap = m0 + kMaxMethod + 1;
        i = scan_token(s, i, std::min(rl_stop, m_cap));
        if (i == m_cap) return ParseResult::error(501, "method too long");
        if (i == rl_stop) return short_of(rl_cap, 414, kLongLine);
        if (s[i] != ' ' || i == m0) return ParseResult::error(400, "invalid method");
        out.method_name = view(m0, i);
        out.method = method_from_name(out.method_name);
    }

    const size_t t0 = ++i;
    size_t path_end = 0;
    i = scan_target_path(s, i, rl_stop, path_end);
    if (i == rl_stop) return short_of(rl_cap, 414, kLongLine);
    if (s[i] == '\r') return ParseResult::error(400, "missing HTTP version");
    if (s[i] != ' ' || i == t0) return ParseResult::error(400, "invalid request target");
    out.target = view(t0, i);
    if (const char* why = classify_target(out.target, path_end - t0, out.method, out))
        return ParseResult::error(400, why);

    ++i;
    unsigned minor = 0;
    const char* v = data.data() + i;
    if (rl_stop - i >= 9 && load4(v) == load4("HTTP") && load4(v + 3) == load4("P/1.") &&
        static_cast<unsigned>(s[i + 7] - '0') < 10u && s[i + 8] == '\r') {
        minor = static_cast<unsigned>(s[i + 7] - '0');
        i += 8;
    } else {
        // The slow path checks byte by byte so that a bad prefix is refused before its end.
        constexpr std::string_view kProto = "HTTP/";
        unsigned major = 0;
        for (size_t k = 0; k < 8; ++k, ++i) {
            if (i == rl_stop) return short_of(rl_cap, 414, kLongLine);
            const unsigned c = s[i];
            const bool ok = k < 5    ? c == static_cast<unsigned char>(kProto[k])
                            : k == 6 ? c == '.'
                                     : c - '0' < 10u;
            if (!ok) return ParseResult::error(400, "invalid HTTP version");
            if (k == 5) major = c - '0';
            if (k == 7) minor = c - '0';
        }
        if (major != 1) return ParseResult::error(505, "HTTP version not supported");
        if (i == rl_stop) return short_of(rl_cap, 414, kLongLine);
        if (s[i] != '\r') return ParseResult::error(400, "invalid HTTP version");
    }
    // HTTP/1.2 and later minors are spoken to as 1.1 (RFC 9110 §2.5).
    out.version_minor = minor == 0 ? 0 : 1;
    if (++i == n) return ParseResult::incomplete();
    if (s[i] != '\n') return ParseResult::error(400, "bare CR");
    ++i;

    // Field lines. The block (up to and including the empty line) must fit max_header_bytes.
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
            return short_of(hb_cap, 431, "header section too large");
        case FieldBlockEnd::TooMany:
            return ParseResult::error(431, "too many header fields");
        case FieldBlockEnd::Malformed:
            return ParseResult::error(400, block.why);
    }
    i = block.next;
    out.headers = headers_storage.first(block.count);

    // The head is complete and well-formed; now what it asks for.
    if (out.version_minor == 1 && !f.has_host) return ParseResult::error(400, "missing Host");
    // An empty Host says the target has no authority (RFC 9112 §3.2); an http URI must have
    // one, so only a target that carries its own (absolute- or authority-form) may go without.
    if (f.has_host && f.host.empty() && out.authority.empty())
        return ParseResult::error(400, "empty Host");
    // rivet tunnels nothing: CONNECT is well-formed but not implemented (RFC 9110 §9.3.6).
    if (out.method == Method::Connect) return ParseResult::error(501, "CONNECT not implemented");
    out.framing = BodyFraming::None;
    out.content_length = 0;
    if (f.has_coding) {
        // Only chunked is implemented: anything else (RFC 9112 §6.1) is a 501.
        if (f.unknown_coding) return ParseResult::error(501, "transfer coding not implemented");
        if (!f.chunked) return ParseResult::error(400, "empty Transfer-Encoding");
        out.framing = BodyFraming::Chunked;
    } else if (f.has_length) {
        if (f.content_length > limits.max_body) return ParseResult::error(413, "content too large");
        out.framing = BodyFraming::ContentLength;
        out.content_length = f.content_length;
    }
    if (f.bad_expect) return ParseResult::error(417, "unsupported expectation");
    // A 1.0 client cannot read a 100 response; RFC 9110 §10.1.1 says to ignore its Expect.
    out.expect_continue = f.expect_continue && out.version_minor == 1;
    out.keep_alive = !f.close && (out.version_minor == 1 || f.keep_alive);
    if (out.authority.empty()) out.authority = f.host;
    return ParseResult::complete(i);
}

// Where the first CRLFCRLF at or after `from` ends, or npos. Every complete head ends with one
// (CR and LF come only in pairs in a valid head), so not finding it proves the head unfinished.
size_t find_head_end(std::string_view data, size_t from) {
    while (from < data.size()) {
        const void* cr = std::memchr(data.data() + from, '\r', data.size() - from);
        if (!cr) return std::string_view::npos;
        const size_t at = static_cast<size_t>(static_cast<const char*>(cr) - data.data());
        if (data.size() - at >= 4 && std::memcmp(data.data() + at, "\r\n\r\n", 4) == 0)
            return at + 4;
        from = at + 1;
    }
    return std::string_view::npos;
}

}  // namespace

ParseResult parse_request_head(std::string_view data, RequestHead& out,
                               std::span<Header> headers_storage, const ParserLimits& limits,
                               HeadScan* scan) {
    const size_t n = data.size();
    size_t searched = 0;
    if (scan && scan->searched > 0 && scan->searched <= n) {
        // The head's end may straddle the old and new bytes: look again from 3 bytes back.
        const size_t from = scan->searched > 3 ? scan->searched - 3 : 0;
        searched = n - from;
        // Past this size no head can still be unfinished: the validating pass must give its
        // 414 or 431 now rather than let the buffer grow.
        const size_t largest = limits.max_request_line + limits.max_header_bytes + 4;
        const bool revalidate = n >= 2 * size_t(scan->validated) || n >= largest;
        if (!revalidate && find_head_end(data, from) == std::string_view::npos) {
            scan->searched = static_cast<uint32_t>(n);
            ParseResult r = ParseResult::incomplete();
            r.examined = searched;
            return r;
        }
    }
    ParseResult r = validate_head(data, out, headers_storage, limits);
    r.examined = searched + n;
    if (scan && r.kind == ParseResult::Incomplete)
        scan->searched = scan->validated = static_cast<uint32_t>(n);
    return r;
}

std::string_view method_name(Method m) {
    constexpr std::string_view kNames[] = {"GET",     "HEAD",  "POST",  "PUT",     "DELETE",
                                           "OPTIONS", "PATCH", "TRACE", "CONNECT", "OTHER"};
    static_assert(std::size(kNames) == static_cast<size_t>(Method::Other) + 1);
    return kNames[std::min(static_cast<size_t>(m), std::size(kNames) - 1)];
}

}  // namespace rivet::http
