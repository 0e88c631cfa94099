// libFuzzer target: the client's response head parser and the body decoder after it.
//
// The first input byte picks small limits (so the limit paths are reached), whether the request
// was HEAD, and the split point; the rest is the response. Beyond the sanitizers' checks, it traps
// when the parser's invariants fail: a prefix giving a different answer than the whole (other
// than Incomplete), views outside the input, more fields than the storage, a body framing that
// contradicts the status, or a decoder consuming more than it was given.
#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "http/body_decoder.hpp"
#include "http/response_parser.hpp"

using namespace rivet::http;

namespace {

void check(bool ok) {
    if (!ok) __builtin_trap();
}

bool inside(std::string_view v, std::string_view in) {
    return v.empty() || (v.data() >= in.data() && v.data() + v.size() <= in.end());
}

bool same(const ParseResult& a, const ParseResult& b) {
    return a.kind == b.kind && a.head_bytes == b.head_bytes && a.status == b.status &&
           std::string_view(a.reason) == b.reason;
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
    if (size == 0) return 0;
    const uint8_t ctl = data[0];
    const std::string_view in(reinterpret_cast<const char*>(data + 1), size - 1);
    ResponseLimits lim;
    if (ctl & 0x80) {
        lim.max_status_line = 4 + (ctl & 0x0f) * 3;
        lim.max_header_bytes = 8 + (ctl & 0x70) / 2;
        lim.max_headers = ctl & 0x07;
    }
    const bool head_request = ctl & 0x02;
    const size_t split = in.empty() ? 0 : (ctl * 2654435761u + size) % (in.size() + 1);

    std::vector<Header> st1(12), st2(12);
    ResponseHead h1, h2;
    const ParseResult whole = parse_response_head(in, head_request, h1, st1, lim);
    const ParseResult part = parse_response_head(in.substr(0, split), head_request, h2, st2, lim);
    if (whole.kind == ParseResult::Complete && split >= whole.head_bytes)
        check(same(part, whole) && h1.status == h2.status && h1.body == h2.body);
    else
        check(part.kind == ParseResult::Incomplete ||
              (whole.kind == ParseResult::Error && same(part, whole)));
    if (whole.kind == ParseResult::Error) check(whole.status == 502 && *whole.reason != '\0');
    if (whole.kind != ParseResult::Complete) return 0;

    check(whole.head_bytes <= in.size() && h1.headers.size() <= st1.size());
    check(h1.status >= 100 && h1.status <= 599 && inside(h1.reason, in));
    for (const Header& h : h1.headers) check(inside(h.name, in) && inside(h.value, in));
    const bool bodiless = head_request || h1.status < 200 || h1.status == 204 || h1.status == 304;
    check(!bodiless || h1.body == ResponseBody::None);
    check(h1.body != ResponseBody::UntilClose || !h1.keep_alive);

    if (h1.body == ResponseBody::ContentLength || h1.body == ResponseBody::Chunked) {
        const uint64_t limit = ctl & 0x40 ? 16 : 1 << 20;
        BodyDecoder d(decoder_framing(h1.body), h1.content_length, limit);
        std::string body;
        const std::string_view rest = in.substr(whole.head_bytes);
        const auto r = d.feed(rest, &body);
        check(r.consumed <= rest.size());
        if (h1.body == ResponseBody::Chunked) check(body.size() <= limit);
    }
    return 0;
}
