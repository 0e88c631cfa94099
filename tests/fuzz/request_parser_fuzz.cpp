// libFuzzer target: the request head parser and the chunked decoder.
//
// The first input byte picks small limits (so the limit paths are reached) and the split point;
// the rest is the request. Beyond the sanitizers' checks, it traps when the parser's invariants
// fail: a split changing the result, a resumed scan (HeadScan) finding a head elsewhere or an
// error that is not there, views outside the input, more fields than the storage, a decoder
// giving different results for whole and split input, a body over its limit, or more bytes
// consumed than given.
#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "http/chunked_decoder.hpp"
#include "http/request_parser.hpp"

using namespace rivet::http;

namespace {

void check(bool ok) {
    if (!ok) __builtin_trap();
}

bool same(const ParseResult& a, const ParseResult& b) {
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

bool inside(std::string_view v, std::string_view in) {
    return v.empty() || v == "/" || (v.data() >= in.data() && v.data() + v.size() <= in.end());
}

struct Decoded {
    ChunkedDecoder::Result::Kind kind;
    size_t consumed;  // total; on Error, the absolute offset refused
    int status;
    std::string body;
};

Decoded decode(std::string_view in, size_t cut, uint64_t max_body, size_t max_trailer) {
    ChunkedDecoder d(max_body, max_trailer);
    Decoded out{};
    auto r = d.feed(in.substr(0, cut), out.body);
    size_t base = 0;
    if (r.kind == ChunkedDecoder::Result::NeedMore) {
        check(r.consumed == cut);
        base = cut;
        r = d.feed(in.substr(cut), out.body);
    }
    out.kind = r.kind;
    out.consumed = base + r.consumed;
    out.status = r.status;
    check(out.consumed <= in.size());
    check(out.body.size() <= max_body);
    return out;
}

void fuzz_decoder(std::string_view in, size_t cut, uint64_t max_body, size_t max_trailer) {
    const Decoded whole = decode(in, in.size(), max_body, max_trailer);
    const Decoded split = decode(in, cut, max_body, max_trailer);
    check(whole.kind == split.kind && whole.status == split.status);
    if (whole.kind == ChunkedDecoder::Result::Error) {
        check(whole.consumed == split.consumed);
    } else {
        check(whole.body == split.body);
        if (whole.kind == ChunkedDecoder::Result::Done) check(whole.consumed == split.consumed);
    }
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
    if (size == 0) return 0;
    const uint8_t ctl = data[0];
    const std::string_view in(reinterpret_cast<const char*>(data + 1), size - 1);
    ParserLimits lim;
    if (ctl & 0x80) {
        lim.max_request_line = 8 + (ctl & 0x0f) * 3;
        lim.max_header_bytes = 16 + (ctl & 0x70) / 2;
        lim.max_headers = ctl & 0x07;
        lim.max_body = ctl & 0x3f;
    }
    const size_t split = in.empty() ? 0 : (ctl * 2654435761u + size) % (in.size() + 1);

    std::vector<Header> st1(12), st2(12), st3(12);
    RequestHead h1, h2, h3;
    const ParseResult whole = parse_request_head(in, h1, st1, lim);
    const ParseResult part = parse_request_head(in.substr(0, split), h2, st2, lim);
    // As a connection feeds it: the prefix, then the whole, with the scan state carried over.
    // The end of a head is found at the same byte; an error may only be reported later.
    HeadScan scan;
    ParseResult resumed = parse_request_head(in.substr(0, split), h3, st3, lim, &scan);
    check(same(resumed, part));  // a fresh scan is a plain parse
    if (resumed.kind == ParseResult::Incomplete)
        resumed = parse_request_head(in, h3, st3, lim, &scan);
    if (whole.kind == ParseResult::Complete)
        check(same(resumed, whole) && same_head(h1, h3));
    else if (whole.kind == ParseResult::Incomplete)
        check(resumed.kind == ParseResult::Incomplete);
    else
        check(resumed.kind == ParseResult::Incomplete || same(resumed, whole));
    if (whole.kind == ParseResult::Complete && split >= whole.head_bytes) {
        check(same(part, whole) && same_head(h2, h1));
    } else {
        check(part.kind == ParseResult::Incomplete ||
              (whole.kind == ParseResult::Error && same(part, whole)));
    }
    if (whole.kind == ParseResult::Error) check(whole.status >= 400 && *whole.reason != '\0');

    if (whole.kind == ParseResult::Complete) {
        check(whole.head_bytes <= in.size() && h1.headers.size() <= st1.size());
        for (const std::string_view v :
             {h1.method_name, h1.target, h1.path, h1.query, h1.authority})
            check(inside(v, in));
        for (const Header& h : h1.headers) check(inside(h.name, in) && inside(h.value, in));
        if (h1.framing == BodyFraming::Chunked) {
            const std::string_view rest = in.substr(whole.head_bytes);
            fuzz_decoder(rest, rest.empty() ? 0 : split % (rest.size() + 1), lim.max_body,
                         ctl & 0x40 ? 16 : 1024);
        }
    }
    // The decoder on its own, too: a chunked head is a rare find for a fuzzer.
    if (ctl & 0x01) fuzz_decoder(in, split, ctl & 0x80 ? lim.max_body : 1 << 20, 64);
    return 0;
}
