// Unit tests of the request head parser: one row per rejection rule, acceptance cases, every
// limit on both sides, and the split/hint invariants (every proper prefix is Incomplete or the
// same error; a HeadScan only delays an error, never changes an answer).
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "http/request_parser.hpp"

using namespace std::string_literals;
using rivet::http::BodyFraming;
using rivet::http::Header;
using rivet::http::Method;
using rivet::http::ParseResult;
using rivet::http::ParserLimits;
using rivet::http::RequestHead;

namespace {

struct Parsed {
    ParseResult r;
    RequestHead head;
    std::vector<Header> storage = std::vector<Header>(64);
};

Parsed parse(std::string_view in, const ParserLimits& limits = {},
             rivet::http::HeadScan* scan = nullptr, size_t storage = 64) {
    Parsed p;
    p.storage.resize(storage);
    p.r = rivet::http::parse_request_head(in, p.head, p.storage, limits, scan);
    return p;
}

std::string describe(const ParseResult& r) {
    switch (r.kind) {
        case ParseResult::Complete:
            return "Complete(" + std::to_string(r.head_bytes) + ")";
        case ParseResult::Incomplete:
            return "Incomplete";
        case ParseResult::Error:
            return "Error(" + std::to_string(r.status) + ", " + r.reason + ")";
    }
    return "?";
}

bool same_result(const ParseResult& a, const ParseResult& b) {
    return a.kind == b.kind && a.head_bytes == b.head_bytes && a.status == b.status &&
           std::string_view(a.reason) == b.reason;
}

bool same_head(const RequestHead& a, const RequestHead& b) {
    if (a.headers.size() != b.headers.size()) return false;
    for (size_t i = 0; i < a.headers.size(); ++i)
        if (a.headers[i].name != b.headers[i].name || a.headers[i].value != b.headers[i].value)
            return false;
    return a.method_name == b.method_name && a.method == b.method && a.target == b.target &&
           a.path == b.path && a.query == b.query && a.authority == b.authority &&
           a.version_minor == b.version_minor && a.framing == b.framing &&
           a.content_length == b.content_length && a.keep_alive == b.keep_alive &&
           a.expect_continue == b.expect_continue;
}

// Every prefix shorter than the head must be Incomplete or already the final error, every longer
// one must give the same head (pipelined data after it changes nothing). Fed one byte more at a
// time with a HeadScan, as a connection would, each answer is Incomplete or the plain one: a
// complete head is found at the same byte, and an error by the time the bytes have doubled.
void expect_split_invariants(std::string_view in, const ParserLimits& limits = {}) {
    const Parsed whole = parse(in, limits);
    for (size_t k = 0; k < in.size(); ++k) {
        const Parsed part = parse(in.substr(0, k), limits);
        bool ok = part.r.kind == ParseResult::Incomplete ||
                  (whole.r.kind == ParseResult::Error && same_result(part.r, whole.r));
        if (whole.r.kind == ParseResult::Complete && k >= whole.r.head_bytes)
            ok = same_result(part.r, whole.r) && same_head(part.head, whole.head);
        ASSERT_TRUE(ok) << "prefix " << k << " of " << testing::PrintToString(std::string(in))
                        << ": " << describe(part.r) << ", whole: " << describe(whole.r);
    }
    rivet::http::HeadScan scan;
    size_t first_error = 0;
    for (size_t k = 1; k <= in.size(); ++k) {
        const Parsed plain = parse(in.substr(0, k), limits);
        const Parsed resumed = parse(in.substr(0, k), limits, &scan);
        if (plain.r.kind == ParseResult::Error && first_error == 0) first_error = k;
        const bool due =
            plain.r.kind == ParseResult::Complete || (first_error > 0 && k >= 2 * first_error);
        if (due || resumed.r.kind != ParseResult::Incomplete) {
            ASSERT_TRUE(same_result(plain.r, resumed.r))
                << "prefix " << k << ": resumed " << describe(resumed.r) << ", plain "
                << describe(plain.r);
        }
        if (plain.r.kind == ParseResult::Complete) {
            ASSERT_TRUE(same_head(plain.head, resumed.head));
        }
        if (resumed.r.kind != ParseResult::Incomplete) break;  // a connection stops here too
    }
}

// ---------------------------------------------------------------------------------------------
// Rejections: one row per rule.

struct Reject {
    const char* name;
    std::string in;
    int status;
};

std::string get(std::string_view fields) {
    return "GET / HTTP/1.1\r\nHost: h\r\n"s += fields;
}
std::string post(std::string_view fields) {
    return "POST / HTTP/1.1\r\nHost: h\r\n"s += fields;
}

const std::vector<Reject>& reject_rows() {
    static const std::vector<Reject> rows = {
        // Framing (RFC 9112 §6): every ambiguity is a 400.
        {"cl_then_te", post("Content-Length: 5\r\nTransfer-Encoding: chunked\r\n\r\n"), 400},
        {"te_then_cl", post("Transfer-Encoding: chunked\r\nContent-Length: 5\r\n\r\n"), 400},
        {"te_empty_with_cl", post("Content-Length: 5\r\nTransfer-Encoding:\r\n\r\n"), 400},
        {"cl_differing_dup", post("Content-Length: 5\r\nContent-Length: 6\r\n\r\n"), 400},
        {"cl_list", post("Content-Length: 5, 5\r\n\r\n"), 400},
        {"cl_non_digit", post("Content-Length: 5a\r\n\r\n"), 400},
        {"cl_hex", post("Content-Length: 0x5\r\n\r\n"), 400},
        {"cl_empty", post("Content-Length:\r\n\r\n"), 400},
        {"cl_blank", post("Content-Length:   \r\n\r\n"), 400},
        {"cl_plus", post("Content-Length: +5\r\n\r\n"), 400},
        {"cl_minus", post("Content-Length: -5\r\n\r\n"), 400},
        {"cl_inner_space", post("Content-Length: 4 2\r\n\r\n"), 400},
        {"cl_overflow", post("Content-Length: 18446744073709551616\r\n\r\n"), 400},
        {"cl_overflow_long", post("Content-Length: 100000000000000000000000\r\n\r\n"), 400},
        {"te_chunked_not_final", post("Transfer-Encoding: chunked, gzip\r\n\r\n"), 400},
        {"te_chunked_twice", post("Transfer-Encoding: chunked, chunked\r\n\r\n"), 400},
        {"te_chunked_twice_lines",
         post("Transfer-Encoding: chunked\r\nTransfer-Encoding: chunked\r\n\r\n"), 400},
        {"te_chunked_then_line",
         post("Transfer-Encoding: chunked\r\nTransfer-Encoding: gzip\r\n\r\n"), 400},
        {"te_empty", post("Transfer-Encoding:\r\n\r\n"), 400},
        {"te_only_commas", post("Transfer-Encoding: , ,\r\n\r\n"), 400},
        {"te_chunked_params", post("Transfer-Encoding: chunked;q=1\r\n\r\n"), 400},
        {"te_not_a_token", post("Transfer-Encoding: chu nked\r\n\r\n"), 400},
        {"te_in_http10", "POST / HTTP/1.0\r\nTransfer-Encoding: chunked\r\n\r\n", 400},
        // Field syntax.
        {"obs_fold", get("X: a\r\n b\r\n\r\n"), 400},
        {"obs_fold_tab", get("X: a\r\n\tb\r\n\r\n"), 400},
        {"fold_first_line", "GET / HTTP/1.1\r\n Host: h\r\n\r\n", 400},
        {"space_before_colon", get("X : a\r\n\r\n"), 400},
        {"tab_before_colon", get("X\t: a\r\n\r\n"), 400},
        {"name_bad_char", get("X@Y: a\r\n\r\n"), 400},
        {"name_ctl", get("X\x01Y: a\r\n\r\n"), 400},
        {"name_non_ascii", get("X\xc3\xa9: a\r\n\r\n"), 400},
        {"name_empty", get(": a\r\n\r\n"), 400},
        {"name_no_colon", get("Xyz\r\n\r\n"), 400},
        {"value_ctl", get("X: a\x01z\r\n\r\n"), 400},
        {"value_del", get("X: a\x7fz\r\n\r\n"), 400},
        {"value_vt", get("X: a\x0bz\r\n\r\n"), 400},
        {"value_ff", get("X: a\x0cz\r\n\r\n"), 400},
        {"value_esc_long",
         get("X: aaaaaaaaaaaaaaaa\x1b"
             "aaaaaaaaaaaaaaaaa\r\n\r\n"),
         400},
        {"value_bare_lf", get("X: a\nY: b\r\n\r\n"), 400},
        // Bare CR, bare LF and NUL, wherever they are.
        {"cr_in_request_line", "GET / HTTP/1.1\rHost: h\r\n\r\n", 400},
        {"cr_in_target", "GET /a\rb HTTP/1.1\r\nHost: h\r\n\r\n", 400},
        {"cr_in_value", get("X: a\rb\r\n\r\n"), 400},
        {"cr_in_name", get("X\rY: a\r\n\r\n"), 400},
        {"cr_at_end", get("\r\r\n"), 400},
        {"cr_leading", "\rGET / HTTP/1.1\r\nHost: h\r\n\r\n", 400},
        {"lf_request_line", "GET / HTTP/1.1\nHost: h\r\n\r\n", 400},
        {"lf_field_line", get("X: a\n\r\n"), 400},
        {"lf_final", get("\n"), 400},
        {"lf_leading", "\nGET / HTTP/1.1\r\nHost: h\r\n\r\n", 400},
        {"nul_method", "G\0ET / HTTP/1.1\r\nHost: h\r\n\r\n"s, 400},
        {"nul_target", "GET /\0 HTTP/1.1\r\nHost: h\r\n\r\n"s, 400},
        {"nul_version", "GET / HTTP/1\0.1\r\nHost: h\r\n\r\n"s, 400},
        {"nul_name", get("X\0: a\r\n\r\n"s), 400},
        {"nul_value", get("X: a\0b\r\n\r\n"s), 400},
        // Host (RFC 9112 §3.2).
        {"host_missing", "GET / HTTP/1.1\r\nX: a\r\n\r\n", 400},
        {"host_missing_absolute", "GET http://h/ HTTP/1.1\r\n\r\n", 400},
        {"host_twice", get("Host: h\r\n\r\n"), 400},
        {"host_twice_case", get("HOST: h\r\n\r\n"), 400},
        {"host_space", "GET / HTTP/1.1\r\nHost: a b\r\n\r\n", 400},
        {"host_userinfo", "GET / HTTP/1.1\r\nHost: u@h\r\n\r\n", 400},
        {"host_slash", "GET / HTTP/1.1\r\nHost: h/x\r\n\r\n", 400},
        // Empty: the target would have no authority; HTTP/1.0 may omit Host, not send it empty.
        {"host_empty", "GET / HTTP/1.1\r\nHost:\r\n\r\n", 400},
        {"host_empty_spaces", "GET / HTTP/1.1\r\nHost:   \r\n\r\n", 400},
        {"host_empty_http10", "GET / HTTP/1.0\r\nHost: \r\n\r\n", 400},
        {"host_empty_asterisk", "OPTIONS * HTTP/1.1\r\nHost:\r\n\r\n", 400},
        // Method and request line.
        {"method_bad_char", "GE(T / HTTP/1.1\r\nHost: h\r\n\r\n", 400},
        {"method_ctl", "GE\x01T / HTTP/1.1\r\nHost: h\r\n\r\n", 400},
        {"method_empty", " / HTTP/1.1\r\nHost: h\r\n\r\n", 400},
        {"method_tab", "GET\t/ HTTP/1.1\r\nHost: h\r\n\r\n", 400},
        {"double_space", "GET  / HTTP/1.1\r\nHost: h\r\n\r\n", 400},
        {"double_space_version", "GET /  HTTP/1.1\r\nHost: h\r\n\r\n", 400},
        {"trailing_space", "GET / HTTP/1.1 \r\nHost: h\r\n\r\n", 400},
        {"missing_version", "GET /\r\nHost: h\r\n\r\n", 400},
        {"missing_target", "GET HTTP/1.1\r\nHost: h\r\n\r\n", 400},
        {"http09", "GET /\r\n\r\n", 400},
        {"target_space", "GET /a b HTTP/1.1\r\nHost: h\r\n\r\n", 400},
        {"target_ctl", "GET /a\x01 HTTP/1.1\r\nHost: h\r\n\r\n", 400},
        {"target_del", "GET /a\x7f HTTP/1.1\r\nHost: h\r\n\r\n", 400},
        {"target_non_ascii", "GET /\xc3\xa9 HTTP/1.1\r\nHost: h\r\n\r\n", 400},
        {"target_tab", "GET /a\tb HTTP/1.1\r\nHost: h\r\n\r\n", 400},
        {"target_relative", "GET a/b HTTP/1.1\r\nHost: h\r\n\r\n", 400},
        {"target_query_only", "GET ?a HTTP/1.1\r\nHost: h\r\n\r\n", 400},
        // A fragment is never sent (RFC 9112 §3.2), in any form.
        {"fragment", "GET /a#frag HTTP/1.1\r\nHost: h\r\n\r\n", 400},
        {"fragment_after_query", "GET /a?b#frag HTTP/1.1\r\nHost: h\r\n\r\n", 400},
        {"fragment_empty", "GET /# HTTP/1.1\r\nHost: h\r\n\r\n", 400},
        {"fragment_absolute", "GET http://h/a#f HTTP/1.1\r\nHost: h\r\n\r\n", 400},
        {"fragment_absolute_authority", "GET http://h#f HTTP/1.1\r\nHost: h\r\n\r\n", 400},
        {"asterisk_not_options", "GET * HTTP/1.1\r\nHost: h\r\n\r\n", 400},
        {"asterisk_extra", "OPTIONS *a HTTP/1.1\r\nHost: h\r\n\r\n", 400},
        {"authority_not_connect", "GET h:80 HTTP/1.1\r\nHost: h\r\n\r\n", 400},
        {"connect_origin_form", "CONNECT / HTTP/1.1\r\nHost: h\r\n\r\n", 400},
        {"connect_no_port", "CONNECT h HTTP/1.1\r\nHost: h\r\n\r\n", 400},
        {"connect_empty_port", "CONNECT h: HTTP/1.1\r\nHost: h\r\n\r\n", 400},
        {"connect_bad_port", "CONNECT h:8x HTTP/1.1\r\nHost: h\r\n\r\n", 400},
        {"connect_no_host", "CONNECT :80 HTTP/1.1\r\nHost: h\r\n\r\n", 400},
        {"absolute_userinfo", "GET http://u:p@h/ HTTP/1.1\r\nHost: h\r\n\r\n", 400},
        {"absolute_no_host", "GET http:///a HTTP/1.1\r\nHost: h\r\n\r\n", 400},
        {"absolute_bad_scheme", "GET ftp://h/a HTTP/1.1\r\nHost: h\r\n\r\n", 400},
        {"absolute_no_slashes", "GET http:h/a HTTP/1.1\r\nHost: h\r\n\r\n", 400},
        // Version syntax.
        {"version_lowercase", "GET / http/1.1\r\nHost: h\r\n\r\n", 400},
        {"version_garbage_minor", "GET / HTTP/1.x\r\nHost: h\r\n\r\n", 400},
        {"version_no_minor", "GET / HTTP/1\r\nHost: h\r\n\r\n", 400},
        {"version_no_dot", "GET / HTTP/11\r\nHost: h\r\n\r\n", 400},
        {"version_two_digit_minor", "GET / HTTP/1.10\r\nHost: h\r\n\r\n", 400},
        {"version_two_digit_major", "GET / HTTP/11.1\r\nHost: h\r\n\r\n", 400},
        {"version_space", "GET / HTTP/ 1.1\r\nHost: h\r\n\r\n", 400},
        {"version_https", "GET / HTTPS/1.1\r\nHost: h\r\n\r\n", 400},
        {"version_rtsp", "GET / RTSP/1.0\r\n\r\n", 400},
        {"version_ice", "SOURCE / ICE/1.0\r\n\r\n", 400},
        // Well-formed but refused.
        {"version_2", "GET / HTTP/2.0\r\nHost: h\r\n\r\n", 505},
        {"version_3", "GET / HTTP/3.0\r\nHost: h\r\n\r\n", 505},
        {"version_9", "GET / HTTP/9.9\r\nHost: h\r\n\r\n", 505},
        {"version_0", "GET / HTTP/0.9\r\nHost: h\r\n\r\n", 505},
        {"connect", "CONNECT h:443 HTTP/1.1\r\nHost: h:443\r\n\r\n", 501},
        {"connect_http10", "CONNECT [::1]:8443 HTTP/1.0\r\n\r\n", 501},
        {"method_33_bytes", std::string(33, 'M') + " / HTTP/1.1\r\nHost: h\r\n\r\n", 501},
        {"te_gzip", post("Transfer-Encoding: gzip\r\n\r\n"), 501},
        {"te_gzip_chunked", post("Transfer-Encoding: gzip, chunked\r\n\r\n"), 501},
        {"te_gzip_then_chunked_line",
         post("Transfer-Encoding: gzip\r\nTransfer-Encoding: chunked\r\n\r\n"), 501},
        {"te_unknown", post("Transfer-Encoding: pigeons\r\n\r\n"), 501},
        {"te_chunkedchunked", post("Transfer-Encoding: chunkedchunked\r\n\r\n"), 501},
        {"te_identity", post("Transfer-Encoding: identity\r\n\r\n"), 501},
        {"cl_over_max_body", post("Content-Length: 8388609\r\n\r\n"), 413},
        {"cl_huge", post("Content-Length: 18446744073709551615\r\n\r\n"), 413},
        {"expect_other", get("Expect: 101-continue\r\n\r\n"), 417},
        {"expect_list", get("Expect: 100-continue, x\r\n\r\n"), 417},
        {"expect_empty", get("Expect:\r\n\r\n"), 417},
        // A framing 400 beats the semantic statuses that wait for the end of the head.
        {"te_gzip_with_cl", post("Transfer-Encoding: gzip\r\nContent-Length: 1\r\n\r\n"), 400},
        {"expect_then_bad_line", get("Expect: nope\r\nX : y\r\n\r\n"), 400},
    };
    return rows;
}

class RequestParserReject : public testing::TestWithParam<Reject> {};

TEST_P(RequestParserReject, HasItsStatusAndSplitsConsistently) {
    const Reject& row = GetParam();
    const Parsed p = parse(row.in);
    ASSERT_EQ(p.r.kind, ParseResult::Error) << describe(p.r);
    EXPECT_EQ(p.r.status, row.status) << p.r.reason;
    EXPECT_STRNE(p.r.reason, "");
    expect_split_invariants(row.in);
}

INSTANTIATE_TEST_SUITE_P(Rules, RequestParserReject, testing::ValuesIn(reject_rows()),
                         [](const testing::TestParamInfo<Reject>& info) {
                             return std::string(info.param.name);
                         });

// The block scans (16 or 8 bytes a step) must judge every byte of a long run, at every offset.
TEST(RequestParser, JudgesEveryByteOfLongTargetsAndValues) {
    for (size_t at = 0; at < 40; ++at) {
        for (const int c :
             {0x00, 0x01, 0x09, 0x0a, 0x0d, 0x1f, 0x20, 0x21, 0x7e, 0x7f, 0x80, 0xff}) {
            std::string value(40, 'v');
            value[at] = static_cast<char>(c);
            const std::string in = get("X: " + value + "\r\n\r\n");
            const Parsed p = parse(in);
            const bool good = c == 0x09 || (c >= 0x20 && c != 0x7f);
            std::string trimmed = value;
            if (trimmed.back() == ' ' || trimmed.back() == '\t') trimmed.pop_back();
            if (trimmed.front() == ' ' || trimmed.front() == '\t') trimmed.erase(0, 1);
            if (good) {
                ASSERT_EQ(p.r.kind, ParseResult::Complete) << "value byte " << c << " at " << at;
                ASSERT_EQ(p.head.headers[1].value, trimmed);
            } else {
                ASSERT_EQ(p.r.kind, ParseResult::Error) << "value byte " << c << " at " << at;
            }

            std::string target = "/" + std::string(40, 't');
            target[at + 1] = static_cast<char>(c);
            const std::string line = "GET " + target + " HTTP/1.1\r\nHost: h\r\n\r\n";
            const Parsed t = parse(line);
            if (c > 0x20 && c < 0x7f) {
                ASSERT_EQ(t.r.kind, ParseResult::Complete) << "target byte " << c << " at " << at;
                ASSERT_EQ(t.head.target, target);
            } else {
                ASSERT_EQ(t.r.kind, ParseResult::Error) << "target byte " << c << " at " << at;
            }
        }
    }
}

// Errors must not wait for the end of the head when the prefix already proves them.
TEST(RequestParser, RefusesGarbageEarly) {
    for (std::string_view in :
         {"GE\x01", "GET /\x01", "GET / HTTP/2.0", "GET / HTTX", "GET / HTTP/1.1\rx", " ",
          "GET / HTTP/1.1\r\nHost: h\r\n X", "GET / HTTP/1.1\r\nX Y", "GET / HTTP/1.1\r\nX: \x01",
          "\r\r", "OPTIONS /\r"}) {
        const Parsed p = parse(in);
        EXPECT_EQ(p.r.kind, ParseResult::Error) << testing::PrintToString(std::string(in));
    }
    // ...but a prefix that may still become valid waits.
    for (std::string_view in : {"", "\r", "\r\n", "G", "GET", "GET ", "GET /", "GET / HTTP/1.",
                                "GET / HTTP/1.1\r", "GET / HTTP/1.1\r\nHost: h\r\n\r"}) {
        EXPECT_EQ(parse(in).r.kind, ParseResult::Incomplete)
            << testing::PrintToString(std::string(in));
    }
}

// ---------------------------------------------------------------------------------------------
// Acceptance.

TEST(RequestParser, ParsesTheCommonCase) {
    const std::string in =
        "GET /a/b?x=1&y=2 HTTP/1.1\r\nHost: example.com:8080\r\nUser-Agent:  curl/8 \r\n"
        "accept:*/*\r\nX-Empty:\r\nX-Tab:\tv\tw\t\r\n\r\n";
    const Parsed p = parse(in);
    ASSERT_EQ(p.r.kind, ParseResult::Complete) << describe(p.r);
    EXPECT_EQ(p.r.head_bytes, in.size());
    const RequestHead& h = p.head;
    EXPECT_EQ(h.method, Method::Get);
    EXPECT_EQ(h.method_name, "GET");
    EXPECT_EQ(h.target, "/a/b?x=1&y=2");
    EXPECT_EQ(h.path, "/a/b");
    EXPECT_EQ(h.query, "x=1&y=2");
    EXPECT_EQ(h.authority, "example.com:8080");
    EXPECT_EQ(h.version_minor, 1);
    EXPECT_EQ(h.framing, BodyFraming::None);
    EXPECT_TRUE(h.keep_alive);
    EXPECT_FALSE(h.expect_continue);
    ASSERT_EQ(h.headers.size(), 5u);
    EXPECT_EQ(h.headers[0].name, "Host");
    EXPECT_EQ(h.headers[1].value, "curl/8");
    EXPECT_EQ(h.headers[2].name, "accept");
    EXPECT_EQ(h.headers[2].value, "*/*");
    EXPECT_EQ(h.headers[3].value, "");
    EXPECT_EQ(h.headers[4].value, "v\tw");
    // Zero-copy: every view points into the input, and the fields into the caller's storage.
    EXPECT_EQ(h.target.data(), in.data() + 4);
    EXPECT_EQ(h.headers.data(), p.storage.data());
    EXPECT_EQ(h.headers[1].value.data(), in.data() + in.find("curl"));
    EXPECT_EQ(rivet::http::find_header(h, "USER-agent"), "curl/8");
    EXPECT_EQ(rivet::http::find_header(h, "absent"), "");
    expect_split_invariants(in);
}

TEST(RequestParser, MapsMethodsCaseSensitively) {
    const std::pair<const char*, Method> cases[] = {
        {"GET", Method::Get},        {"HEAD", Method::Head},
        {"POST", Method::Post},      {"PUT", Method::Put},
        {"DELETE", Method::Delete},  {"OPTIONS", Method::Options},
        {"PATCH", Method::Patch},    {"TRACE", Method::Trace},
        {"get", Method::Other},      {"PROPFIND", Method::Other},
        {"M-SEARCH", Method::Other}, {"QUERY", Method::Other},
        {"GETS", Method::Other},     {"!#$%&'*+-.^_`|~", Method::Other},
    };
    for (const auto& [name, method] : cases) {
        const std::string in = std::string(name) + " /x HTTP/1.1\r\nHost: h\r\n\r\n";
        const Parsed p = parse(in);
        ASSERT_EQ(p.r.kind, ParseResult::Complete) << name << ": " << describe(p.r);
        EXPECT_EQ(p.head.method, method) << name;
        EXPECT_EQ(p.head.method_name, name);
        if (method != Method::Other) {
            EXPECT_EQ(rivet::http::method_name(method), name);
        }
    }
    // CONNECT is recognized (its authority-form checked, see the 400s) but refused with 501.
    EXPECT_EQ(parse("CONNECT example.com:443 HTTP/1.1\r\nHost: example.com:443\r\n\r\n").r.status,
              501);
}

TEST(RequestParser, MethodLengthLimit) {
    // 32 bytes is a method (Method::Other); the 33rd byte proves a 501, with or without the rest.
    const std::string m32(32, 'M');
    const std::string in = m32 + " / HTTP/1.1\r\nHost: h\r\n\r\n";
    const Parsed p = parse(in);
    ASSERT_EQ(p.r.kind, ParseResult::Complete) << describe(p.r);
    EXPECT_EQ(p.head.method_name, m32);
    EXPECT_EQ(parse(m32).r.kind, ParseResult::Incomplete);
    EXPECT_EQ(parse(m32 + "M").r.status, 501);
    EXPECT_EQ(parse(std::string(9000, 'M')).r.status, 501);  // not 414: it is no URI
    // Leading empty lines still count toward the request line's limit first.
    ParserLimits lim;
    lim.max_request_line = 20;
    std::string empty_lines;
    for (int k = 0; k < 10; ++k) empty_lines += "\r\n";
    EXPECT_EQ(parse(empty_lines + "GET", lim).r.status, 414);
}

TEST(RequestParser, EmptyHostOnlyWithAnAuthorityInTheTarget) {
    // absolute-form carries its own authority: the (empty) Host is ignored (RFC 9112 §3.2.2).
    const Parsed p = parse("GET http://example.com/a HTTP/1.1\r\nHost:\r\n\r\n");
    ASSERT_EQ(p.r.kind, ParseResult::Complete) << describe(p.r);
    EXPECT_EQ(p.head.authority, "example.com");
    // HTTP/1.0 may leave Host out entirely.
    EXPECT_EQ(parse("GET / HTTP/1.0\r\n\r\n").r.kind, ParseResult::Complete);
    EXPECT_EQ(parse("GET / HTTP/1.0\r\nHost:\r\n\r\n").r.status, 400);
}

TEST(RequestParser, AcceptsEveryTargetForm) {
    struct Case {
        const char* line;
        const char* path;
        const char* query;
        const char* authority;
    };
    const Case cases[] = {
        {"GET http://example.com:8080/a/b?x=1 HTTP/1.1", "/a/b", "x=1", "example.com:8080"},
        {"GET HTTPS://Example.com/ HTTP/1.1", "/", "", "Example.com"},
        {"GET http://example.com HTTP/1.1", "/", "", "example.com"},
        {"GET http://example.com?q=1 HTTP/1.1", "/", "q=1", "example.com"},
        {"GET http://[::1]:80/x HTTP/1.1", "/x", "", "[::1]:80"},
        {"OPTIONS * HTTP/1.1", "*", "", "host.test"},
        {"GET /a?b?c HTTP/1.1", "/a", "b?c", "host.test"},
        {"GET /q? HTTP/1.1", "/q", "", "host.test"},
        {"GET /with_\"quotes\"|\\bars HTTP/1.1", "/with_\"quotes\"|\\bars", "", "host.test"},
    };
    for (const Case& c : cases) {
        const std::string in = std::string(c.line) + "\r\nHost: host.test\r\n\r\n";
        const Parsed p = parse(in);
        ASSERT_EQ(p.r.kind, ParseResult::Complete) << c.line << ": " << describe(p.r);
        EXPECT_EQ(p.head.path, c.path) << c.line;
        EXPECT_EQ(p.head.query, c.query) << c.line;
        EXPECT_EQ(p.head.authority, c.authority) << c.line;
        expect_split_invariants(in);
    }
}

// A session parses a batch of pipelined heads into one RequestHead: each complete head must
// come out as it would into a fresh one, whatever the head before it set, after an error too.
TEST(RequestParser, AHeadParsedOverAnotherComesOutAsIfFresh) {
    const char* heads[] = {
        "POST http://a.example:81/x?q=1 HTTP/1.1\r\nHost: a\r\nContent-Length: 5\r\n"
        "Expect: 100-continue\r\nConnection: close\r\n\r\n",
        "GET / HTTP/1.1\r\nHost: b\r\n\r\n",
        "PUT /y HTTP/1.0\r\nConnection: keep-alive\r\n\r\n",
        "OPTIONS * HTTP/1.1\r\nHost: c\r\n\r\n",
        "POST /z?w HTTP/1.1\r\nHost: d\r\nTransfer-Encoding: chunked\r\n\r\n",
        "GET /bad#frag HTTP/1.1\r\nHost: e\r\n\r\n",
        "GET /a?b HTTP/1.1\r\nHost: f\r\nX-A: 1\r\nX-B: 2\r\n\r\n",
        "GET http://g.example HTTP/1.1\r\nHost: g\r\n\r\n",
        "DELETE /h HTTP/1.1\r\nHost: h\r\n\r\n",
    };
    std::vector<Header> storage(64);
    RequestHead reused;
    for (const char* first : heads) {
        for (const char* then : heads) {
            rivet::http::parse_request_head(first, reused, storage, {});
            const auto r = rivet::http::parse_request_head(then, reused, storage, {});
            const Parsed fresh = parse(then);
            ASSERT_TRUE(same_result(r, fresh.r)) << then;
            if (r.kind == ParseResult::Complete) {
                EXPECT_TRUE(same_head(reused, fresh.head)) << first << " then " << then;
            }
        }
    }
}

// The path ends at the first '?' (the query is what follows it) wherever that falls: inside the
// 16-byte blocks the target is scanned in, or in the bytes after them; a '#' anywhere, before or
// after a '?', is refused. For GET (read in one step) and for other methods alike.
TEST(RequestParser, SplitsPathAndQueryAtEveryOffset) {
    const std::string chars = "abc/-._~%20!$&'()*+,;=:@XYZ019";
    for (const char* method : {"GET", "DELETE"}) {
        for (size_t len = 2; len <= 70; ++len) {
            std::string plain = "/";
            for (size_t k = 1; k < len; ++k) plain += chars[k % chars.size()];
            for (size_t at = 1; at < len; ++at) {
                std::string target = plain;
                target[at] = '?';
                const std::string in =
                    std::string(method) + " " + target + " HTTP/1.1\r\nHost: h\r\n\r\n";
                // With the request line's limit at its length, the scan meets the limit right
                // after the line: the last bytes of the target go through the byte loop, not
                // the 16-byte blocks.
                ParserLimits tight;
                tight.max_request_line = in.find('\r');
                for (const ParserLimits& limits : {ParserLimits{}, tight}) {
                    const Parsed p = parse(in, limits);
                    ASSERT_EQ(p.r.kind, ParseResult::Complete) << in << ": " << describe(p.r);
                    EXPECT_EQ(p.head.target, target);
                    EXPECT_EQ(p.head.path, target.substr(0, at)) << in;
                    EXPECT_EQ(p.head.query, target.substr(at + 1)) << in;
                }
                for (size_t hash = 1; hash < len; ++hash) {
                    std::string with_fragment = target;
                    with_fragment[hash] = '#';
                    for (const ParserLimits& limits : {ParserLimits{}, tight}) {
                        const Parsed f = parse(std::string(method) + " " + with_fragment +
                                                   " HTTP/1.1\r\nHost: h\r\n\r\n",
                                               limits);
                        EXPECT_EQ(f.r.status, 400) << with_fragment;
                        EXPECT_STREQ(f.r.reason, "fragment in request target") << with_fragment;
                    }
                }
            }
        }
    }
}

TEST(RequestParser, AppliesKeepAliveRules) {
    struct Case {
        const char* version;
        const char* connection;  // nullptr: no Connection field
        bool keep_alive;
    };
    const Case cases[] = {
        {"1.1", nullptr, true},           {"1.1", "close", false},
        {"1.1", "Close", false},          {"1.1", "keep-alive", true},
        {"1.1", "upgrade, CLOSE", false}, {"1.1", "closed", true},
        {"1.1", " ,close , ", false},     {"1.1", "keep-alive, close", false},
        {"1.0", nullptr, false},          {"1.0", "keep-alive", true},
        {"1.0", "Keep-Alive", true},      {"1.0", "keep-alive, close", false},
        {"1.0", "keep-alived", false},    {"1.2", nullptr, true},
    };
    for (const Case& c : cases) {
        std::string in = "GET / HTTP/" + std::string(c.version) + "\r\nHost: h\r\n";
        if (c.connection) in += "Connection: " + std::string(c.connection) + "\r\n";
        in += "\r\n";
        const Parsed p = parse(in);
        ASSERT_EQ(p.r.kind, ParseResult::Complete) << in << describe(p.r);
        EXPECT_EQ(p.head.keep_alive, c.keep_alive) << in;
    }
    // Two Connection lines are one list.
    const Parsed two = parse(get("Connection: keep-alive\r\nConnection: close\r\n\r\n"));
    EXPECT_FALSE(two.head.keep_alive);
    // HTTP/1.2 is spoken to as 1.1; HTTP/1.0 needs no Host.
    EXPECT_EQ(parse("GET / HTTP/1.2\r\nHost: h\r\n\r\n").head.version_minor, 1);
    const Parsed ten = parse("HEAD / HTTP/1.0\r\n\r\n");
    ASSERT_EQ(ten.r.kind, ParseResult::Complete);
    EXPECT_EQ(ten.head.method, Method::Head);
    EXPECT_EQ(ten.head.version_minor, 0);
    EXPECT_EQ(ten.head.authority, "");
}

TEST(RequestParser, ReadsBodyFramingAndExpect) {
    Parsed p = parse(post("content-length: 0042\r\n\r\n"));
    ASSERT_EQ(p.r.kind, ParseResult::Complete) << describe(p.r);
    EXPECT_EQ(p.head.framing, BodyFraming::ContentLength);
    EXPECT_EQ(p.head.content_length, 42u);

    p = parse(post("Content-Length: 7\r\nX: y\r\nContent-Length: 7\r\n\r\n"));  // same value
    ASSERT_EQ(p.r.kind, ParseResult::Complete) << describe(p.r);
    EXPECT_EQ(p.head.content_length, 7u);

    p = parse(post("Content-Length: 0\r\n\r\n"));
    EXPECT_EQ(p.head.framing, BodyFraming::ContentLength);
    EXPECT_EQ(p.head.content_length, 0u);

    for (const char* te : {"chunked", "Chunked", "CHUNKED", " , chunked ,", "chunked\t"}) {
        p = parse(post("Transfer-Encoding: " + std::string(te) + "\r\n\r\n"));
        ASSERT_EQ(p.r.kind, ParseResult::Complete) << te << describe(p.r);
        EXPECT_EQ(p.head.framing, BodyFraming::Chunked) << te;
    }

    p = parse(post("Expect: 100-Continue\r\nContent-Length: 5\r\n\r\n"));
    ASSERT_EQ(p.r.kind, ParseResult::Complete);
    EXPECT_TRUE(p.head.expect_continue);
    p = parse("POST / HTTP/1.0\r\nExpect: 100-continue\r\nContent-Length: 5\r\n\r\n");
    ASSERT_EQ(p.r.kind, ParseResult::Complete);
    EXPECT_FALSE(p.head.expect_continue);  // RFC 9110 §10.1.1: ignored in HTTP/1.0
}

TEST(RequestParser, AcceptsObsTextAndSkipsLeadingEmptyLines) {
    const std::string obs = get("X: D\xc3\xbcsseldorf \xff\x80\r\n\r\n");
    Parsed p = parse(obs);
    ASSERT_EQ(p.r.kind, ParseResult::Complete) << describe(p.r);
    EXPECT_EQ(p.head.headers[1].value, "D\xc3\xbcsseldorf \xff\x80");

    const std::string lead = "\r\n\r\nGET / HTTP/1.1\r\nHost: h\r\n\r\n";
    p = parse(lead);
    ASSERT_EQ(p.r.kind, ParseResult::Complete) << describe(p.r);
    EXPECT_EQ(p.r.head_bytes, lead.size());
    EXPECT_EQ(p.head.method_name.data(), lead.data() + 4);
    expect_split_invariants(lead);
}

TEST(RequestParser, StopsAtTheEndOfAPipelinedHead) {
    const std::string first = "GET /1 HTTP/1.1\r\nHost: h\r\n\r\n";
    const std::string second = "HEAD /2 HTTP/1.1\r\nHost: h\r\nConnection: close\r\n\r\n";
    const std::string third = "GET /3 HTTP/1.1\r\nHost: h\r\n\r\n";
    const std::string all = first + second + third;
    Parsed p = parse(all);
    ASSERT_EQ(p.r.kind, ParseResult::Complete);
    EXPECT_EQ(p.r.head_bytes, first.size());
    EXPECT_EQ(p.head.path, "/1");
    p = parse(std::string_view(all).substr(first.size()));
    ASSERT_EQ(p.r.kind, ParseResult::Complete);
    EXPECT_EQ(p.r.head_bytes, second.size());
    EXPECT_EQ(p.head.method, Method::Head);
    EXPECT_FALSE(p.head.keep_alive);
    // A garbage third request does not spoil the ones before it.
    const std::string bad = first + "GET / HTTP/1.1\r\nBad Name: x\r\n\r\n";
    p = parse(bad);
    ASSERT_EQ(p.r.kind, ParseResult::Complete);
    EXPECT_EQ(p.r.head_bytes, first.size());
}

// ---------------------------------------------------------------------------------------------
// Limits: just under each accepted, just over refused (complete and while incomplete).

TEST(RequestParser, RequestLineLimit) {
    ParserLimits lim;
    lim.max_request_line = 64;
    const std::string base = "GET /";
    const std::string tail = " HTTP/1.1";
    const std::string fits = base + std::string(64 - base.size() - tail.size(), 'a') + tail;
    ASSERT_EQ(fits.size(), 64u);
    const std::string rest = "\r\nHost: h\r\n\r\n";
    EXPECT_EQ(parse(fits + rest, lim).r.kind, ParseResult::Complete);
    const std::string over = base + std::string(65 - base.size() - tail.size(), 'a') + tail;
    Parsed p = parse(over + rest, lim);
    ASSERT_EQ(p.r.kind, ParseResult::Error);
    EXPECT_EQ(p.r.status, 414);
    // Without a line end: 64 bytes may still be a valid line, 65 cannot.
    EXPECT_EQ(parse("GET /" + std::string(59, 'a'), lim).r.kind, ParseResult::Incomplete);
    EXPECT_EQ(parse("GET /" + std::string(60, 'a'), lim).r.status, 414);
    // Leading empty lines count toward it.
    EXPECT_EQ(parse("\r\n" + fits + rest, lim).r.status, 414);
    expect_split_invariants(over + rest, lim);
    expect_split_invariants(fits + rest, lim);
}

TEST(RequestParser, HeaderBlockLimit) {
    ParserLimits lim;
    lim.max_header_bytes = 40;
    const std::string line = "GET / HTTP/1.1\r\n";
    const std::string host = "Host: h\r\n";                                     // 9
    const std::string fits = host + "X: " + std::string(24, 'v') + "\r\n\r\n";  // 40
    ASSERT_EQ(fits.size(), 40u);
    EXPECT_EQ(parse(line + fits, lim).r.kind, ParseResult::Complete);
    const std::string over = host + "X: " + std::string(25, 'v') + "\r\n\r\n";
    EXPECT_EQ(parse(line + over, lim).r.status, 431);
    EXPECT_EQ(parse(line + std::string(over, 0, 40), lim).r.status, 431);  // proven already
    EXPECT_EQ(parse(line + std::string(over, 0, 39), lim).r.kind, ParseResult::Incomplete);
    expect_split_invariants(line + over, lim);
    expect_split_invariants(line + fits, lim);
}

TEST(RequestParser, FieldCountLimits) {
    ParserLimits lim;
    lim.max_headers = 4;
    auto with_fields = [](int n) {
        std::string in = "GET / HTTP/1.1\r\nHost: h\r\n";
        for (int i = 1; i < n; ++i) in.append("X").append(std::to_string(i)).append(": v\r\n");
        return in + "\r\n";
    };
    Parsed p = parse(with_fields(4), lim);
    ASSERT_EQ(p.r.kind, ParseResult::Complete);
    EXPECT_EQ(p.head.headers.size(), 4u);
    p = parse(with_fields(5), lim);
    EXPECT_EQ(p.r.status, 431);
    expect_split_invariants(with_fields(5), lim);
    // The caller's storage bounds it too.
    EXPECT_EQ(parse(with_fields(3), {}, nullptr, 3).r.kind, ParseResult::Complete);
    EXPECT_EQ(parse(with_fields(4), {}, nullptr, 3).r.status, 431);
    EXPECT_EQ(parse(with_fields(1), {}, nullptr, 0).r.status, 431);
}

TEST(RequestParser, BodyLimit) {
    ParserLimits lim;
    lim.max_body = 100;
    EXPECT_EQ(parse(post("Content-Length: 100\r\n\r\n"), lim).r.kind, ParseResult::Complete);
    EXPECT_EQ(parse(post("Content-Length: 101\r\n\r\n"), lim).r.status, 413);
    // Chunked bodies are the decoder's business.
    EXPECT_EQ(parse(post("Transfer-Encoding: chunked\r\n\r\n"), lim).r.kind, ParseResult::Complete);
}

// ---------------------------------------------------------------------------------------------
// Feeding a stream byte by byte, as a connection would: a growing buffer, the hint set to the
// previous length, heads and Content-Length bodies consumed as they complete.

TEST(RequestParser, ByteByByteStreamGivesTheSameRequests) {
    const std::string stream =
        "GET /one HTTP/1.1\r\nHost: a\r\nAccept: */*\r\n\r\n"
        "POST /two?x=y HTTP/1.1\r\nHost: a\r\nContent-Length: 5\r\n\r\nhello"
        "\r\n"  // a stray empty line between requests, as RFC 9112 §2.2 tolerates
        "OPTIONS * HTTP/1.1\r\nHost: a\r\nExpect: 100-continue\r\n\r\n"
        "GET http://b.test/three HTTP/1.1\r\nHost: a\r\nX-Long: " +
        std::string(300, 'z') + "\r\n\r\n" +
        "DELETE /four HTTP/1.0\r\nConnection: keep-alive\r\n\r\n";
    const char* paths[] = {"/one", "/two", "*", "/three", "/four"};

    // Reference: whole-buffer parsing.
    std::vector<RequestHead> expected;
    std::vector<std::vector<Header>> keep;
    for (size_t pos = 0; pos < stream.size();) {
        keep.emplace_back(16);
        RequestHead h;
        const ParseResult r = rivet::http::parse_request_head(std::string_view(stream).substr(pos),
                                                              h, keep.back(), ParserLimits{});
        ASSERT_EQ(r.kind, ParseResult::Complete) << describe(r) << " at " << pos;
        pos += r.head_bytes + h.content_length;
        expected.push_back(h);
    }
    ASSERT_EQ(expected.size(), 5u);

    for (const bool hinted : {false, true}) {
        std::string buf;
        rivet::http::HeadScan scan;
        size_t got = 0;
        std::vector<Header> storage(16);
        for (const char c : stream) {
            buf.push_back(c);
            RequestHead h;
            const ParseResult r = rivet::http::parse_request_head(buf, h, storage, ParserLimits{},
                                                                  hinted ? &scan : nullptr);
            ASSERT_NE(r.kind, ParseResult::Error) << describe(r);
            if (r.kind == ParseResult::Incomplete) continue;
            if (buf.size() - r.head_bytes < h.content_length) continue;  // body not in yet
            ASSERT_LT(got, expected.size());
            const RequestHead& e = expected[got];
            EXPECT_EQ(h.path, paths[got]);
            EXPECT_EQ(h.method_name, e.method_name);
            EXPECT_EQ(h.target, e.target);
            EXPECT_EQ(h.authority, e.authority);
            EXPECT_EQ(h.keep_alive, e.keep_alive);
            EXPECT_EQ(h.expect_continue, e.expect_continue);
            ASSERT_EQ(h.headers.size(), e.headers.size());
            for (size_t k = 0; k < h.headers.size(); ++k) {
                EXPECT_EQ(h.headers[k].name, e.headers[k].name);
                EXPECT_EQ(h.headers[k].value, e.headers[k].value);
            }
            buf.erase(0, r.head_bytes + h.content_length);
            scan = {};
            ++got;
        }
        EXPECT_EQ(got, expected.size());
        EXPECT_TRUE(buf.empty());
        expect_split_invariants(stream);
    }
}

// A connection may reuse one RequestHead: nothing of the previous request may show through.
TEST(RequestParser, OverwritesAReusedHead) {
    const std::string first =
        "POST http://a.test/p?q HTTP/1.1\r\nHost: h\r\nContent-Length: 3\r\n"
        "Expect: 100-continue\r\nConnection: close\r\n\r\n";
    const std::string second = "GET /x HTTP/1.0\r\n\r\n";
    const std::string third = "GET /y HTTP/1.1\r\nHost: h\r\n\r\n";
    std::vector<Header> storage(8);
    RequestHead h;
    ASSERT_EQ(rivet::http::parse_request_head(first, h, storage, {}).kind, ParseResult::Complete);
    EXPECT_EQ(h.framing, BodyFraming::ContentLength);
    ASSERT_EQ(rivet::http::parse_request_head(second, h, storage, {}).kind, ParseResult::Complete);
    EXPECT_EQ(h.framing, BodyFraming::None);
    EXPECT_EQ(h.content_length, 0u);
    EXPECT_EQ(h.query, "");
    EXPECT_EQ(h.authority, "");
    EXPECT_FALSE(h.expect_continue);
    EXPECT_EQ(h.headers.size(), 0u);
    ASSERT_EQ(rivet::http::parse_request_head(third, h, storage, {}).kind, ParseResult::Complete);
    EXPECT_TRUE(h.keep_alive);
    EXPECT_EQ(h.version_minor, 1);
    RequestHead fresh;
    ASSERT_EQ(rivet::http::parse_request_head(third, fresh, storage, {}).kind,
              ParseResult::Complete);
    EXPECT_TRUE(same_head(h, fresh));
}

TEST(RequestParser, IequalsAndMethodNames) {
    EXPECT_TRUE(rivet::http::iequals("Content-Length", "content-LENGTH"));
    EXPECT_FALSE(rivet::http::iequals("Content-Length", "Content-Lengt"));
    EXPECT_FALSE(rivet::http::iequals("a", "b"));
    EXPECT_FALSE(rivet::http::iequals("[", "{"));  // not letters: no case folding
    EXPECT_TRUE(rivet::http::iequals("", ""));
    EXPECT_EQ(rivet::http::method_name(Method::Other), "OTHER");
}

// iequals compares words of eight and four bytes, the last overlapping the one before, and
// single bytes below four: every pair of bytes, at the first, a middle and the last position
// of names of every length up to 20, is equal exactly when ASCII case folding makes it so
// (obs-text and the bytes next to the letters, '@' '[' '`' '{', are not folded).
TEST(RequestParser, IequalsFoldsAsciiLettersOnlyAtEveryPositionAndLength) {
    const auto fold = [](int c) { return c >= 'A' && c <= 'Z' ? c + 32 : c; };
    for (size_t n = 1; n <= 20; ++n) {
        for (size_t at : {size_t(0), n / 2, n - 1}) {
            for (int c1 = 0; c1 < 256; ++c1) {
                for (int c2 = 0; c2 < 256; ++c2) {
                    std::string a(n, 'x'), b(n, 'X');
                    a[at] = char(c1);
                    b[at] = char(c2);
                    if (rivet::http::iequals(a, b) != (fold(c1) == fold(c2)))
                        FAIL() << "length " << n << " at " << at << ": " << c1 << " vs " << c2;
                }
            }
        }
    }
    EXPECT_FALSE(rivet::http::iequals("Content-Length", "Content-Lengtj"));
    EXPECT_TRUE(rivet::http::iequals("ACCEPT-ENCODING", "accept-encoding"));
}

// A head that trickles in costs linear work: a 16 KiB head fed one byte at a time is examined
// a few times over, not once per byte received (which would be ~134 million bytes).
TEST(RequestParser, HeadFedByteByByteIsScannedInLinearWork) {
    std::string head = "GET /linear HTTP/1.1\r\nHost: h\r\n";
    for (int i = 0; head.size() < 16 * 1024 - 40; ++i)
        head += "X-Field-" + std::to_string(i) + ": " + std::string(50, 'v') + "\r\n";
    head += "\r\n";
    ASSERT_GE(head.size(), 16u * 1024 - 100);
    ParserLimits limits;
    limits.max_header_bytes = 32 * 1024;
    limits.max_headers = 1000;

    auto feed = [&](bool resume) {
        rivet::http::HeadScan scan;
        std::vector<Header> storage(1000);
        uint64_t examined = 0;
        for (size_t k = 1; k <= head.size(); ++k) {
            RequestHead h;
            const ParseResult r = rivet::http::parse_request_head(
                std::string_view(head).substr(0, k), h, storage, limits, resume ? &scan : nullptr);
            examined += r.examined;
            if (k < head.size()) {
                EXPECT_EQ(r.kind, ParseResult::Incomplete) << k;
            }
            if (k == head.size()) {
                EXPECT_EQ(r.kind, ParseResult::Complete) << describe(r);
                EXPECT_EQ(r.head_bytes, head.size());
                EXPECT_EQ(h.path, "/linear");
            }
        }
        return examined;
    };
    const uint64_t n = head.size();
    const uint64_t resumed = feed(true);
    EXPECT_LE(resumed, 8 * n) << "bytes examined for a " << n << "-byte head";
    // Without the scan state each call reads everything again: the quadratic cost it avoids.
    EXPECT_GE(feed(false), n * (n + 1) / 2);
}

// The same head split at every point answers the same with and without the scan state, and
// garbage trickled in is refused once its bytes have doubled.
TEST(RequestParser, ResumedScanRefusesTrickledGarbage) {
    const std::string garbage =
        "GET / HTTP/1.1\r\nHost: h\r\nBad Field: x\r\n" + std::string(200, 'y');
    rivet::http::HeadScan scan;
    std::vector<Header> storage(16);
    size_t refused_at = 0;
    for (size_t k = 1; k <= garbage.size() && refused_at == 0; ++k) {
        RequestHead h;
        auto r = rivet::http::parse_request_head(std::string_view(garbage).substr(0, k), h, storage,
                                                 ParserLimits{}, &scan);
        if (r.kind == ParseResult::Error) {
            EXPECT_EQ(r.status, 400);
            EXPECT_STREQ(r.reason, "whitespace before colon");
            refused_at = k;
        }
    }
    const size_t proven_at = garbage.find(' ', garbage.find("Bad")) + 1;
    EXPECT_GE(refused_at, proven_at);
    EXPECT_LE(refused_at, 2 * proven_at);
}

}  // namespace
