// libFuzzer target: the PROXY protocol header parser (net/proxy_header.hpp).
//
// The first input byte picks the v2 bound and a split point; the rest is what a peer sent. Beyond
// the sanitizers' checks, it traps when the parser's invariants fail: a header longer than its
// bound or than the input, a prefix of the input deciding differently from the whole (a prefix
// may only be Incomplete, or give the same Absent, Invalid or Done), a source address of a family
// other than IPv4 or IPv6.
#include <sys/socket.h>

#include <cstddef>
#include <cstdint>
#include <string_view>

#include "net/proxy_header.hpp"

using namespace rivet::net;
using Kind = ProxyHeader::Kind;

namespace {

void check(bool ok) {
    if (!ok) __builtin_trap();
}

bool same(const ProxyHeader& a, const ProxyHeader& b) {
    return a.kind == b.kind && a.consumed == b.consumed && a.has_source == b.has_source &&
           a.source.ss_family == b.source.ss_family;
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
    if (size == 0) return 0;
    const uint8_t ctl = data[0];
    const std::string_view in(reinterpret_cast<const char*>(data + 1), size - 1);
    const size_t bound = ctl & 0x80 ? 16 + (ctl & 0x7f) * 4 : kMaxProxyHeader;
    const size_t split = in.empty() ? 0 : (ctl * 2654435761u + size) % (in.size() + 1);

    const ProxyHeader whole = parse_proxy_header(in, bound);
    const ProxyHeader part = parse_proxy_header(in.substr(0, split), bound);
    if (whole.kind == Kind::Done) {
        check(whole.consumed > 0 && whole.consumed <= in.size());
        check(whole.consumed <= kMaxProxyHeader &&
              (whole.consumed <= bound || whole.consumed <= kMaxProxyV1Line));
        check(!whole.has_source || whole.source.ss_family == AF_INET ||
              whole.source.ss_family == AF_INET6);
        // What follows the header cannot change it.
        check(same(parse_proxy_header(in.substr(0, whole.consumed), bound), whole));
    } else {
        check(whole.consumed == 0 && !whole.has_source);
    }
    if (whole.kind == Kind::Incomplete) check(in.size() < kMaxProxyHeader);
    check(part.kind == Kind::Incomplete || same(part, whole));
    return 0;
}
