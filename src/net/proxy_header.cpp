#include "net/proxy_header.hpp"

#include <arpa/inet.h>
#include <netinet/in.h>

#include <algorithm>
#include <cstring>

namespace rivet::net {

namespace {

using Kind = ProxyHeader::Kind;

constexpr std::string_view kV1Signature = "PROXY ";
constexpr std::string_view kV2Signature{"\r\n\r\n\0\r\nQUIT\n", 12};
constexpr size_t kV2Fixed = 16;  // signature, version and command, family, length

// What the first bytes say: Absent when they leave the signature, else whether all of it is here.
Kind match_signature(std::string_view in, std::string_view signature) {
    size_t n = std::min(in.size(), signature.size());
    if (in.substr(0, n) != signature.substr(0, n)) return Kind::Absent;
    return n == signature.size() ? Kind::Done : Kind::Incomplete;
}

ProxyHeader result(Kind kind, size_t consumed = 0) {
    ProxyHeader h;
    h.kind = kind;
    h.consumed = consumed;
    return h;
}

// A v1 port: decimal 0..65535, no sign, no leading zero.
bool parse_port(std::string_view s, uint16_t& out) {
    if (s.empty() || s.size() > 5 || (s.size() > 1 && s[0] == '0')) return false;
    uint32_t v = 0;
    for (char c : s) {
        if (c < '0' || c > '9') return false;
        v = v * 10 + uint32_t(c - '0');
    }
    if (v > 65535) return false;
    out = uint16_t(v);
    return true;
}

// A v1 address of the line's family, into `out` (in_addr or in6_addr bytes).
bool parse_address(std::string_view s, int family, void* out) {
    char text[INET6_ADDRSTRLEN];
    if (s.empty() || s.size() >= sizeof text) return false;
    std::memcpy(text, s.data(), s.size());
    text[s.size()] = '\0';
    return inet_pton(family, text, out) == 1;
}

// Splits the next field off `rest` at a single space (the last field ends the line).
std::string_view next_field(std::string_view& rest) {
    size_t sp = rest.find(' ');
    std::string_view f = rest.substr(0, sp);
    rest = sp == std::string_view::npos ? std::string_view{} : rest.substr(sp + 1);
    return f;
}

// "PROXY TCP4 192.0.2.1 198.51.100.2 56324 443\r\n", "PROXY TCP6 ...", "PROXY UNKNOWN ...\r\n".
ProxyHeader parse_v1(std::string_view in) {
    // Only printable bytes and spaces, then CRLF, within the bound; fail as early as the bytes
    // allow, so a client sending junk slowly is refused at its first bad byte.
    const size_t scan = std::min(in.size(), kMaxProxyV1Line);
    size_t end = 0;
    for (; end < scan; ++end) {
        unsigned char c = static_cast<unsigned char>(in[end]);
        if (c == '\r') {
            if (end + 1 < in.size() && in[end + 1] != '\n') return result(Kind::Invalid);
            if (end + 1 >= kMaxProxyV1Line) return result(Kind::Invalid);  // no room for LF
            if (end + 1 == in.size()) return result(Kind::Incomplete);
            break;
        }
        if (c < 0x20 || c > 0x7e) return result(Kind::Invalid);
    }
    if (end == scan) return result(scan == kMaxProxyV1Line ? Kind::Invalid : Kind::Incomplete);
    const size_t consumed = end + 2;  // CR LF

    std::string_view rest = in.substr(kV1Signature.size(), end - kV1Signature.size());
    std::string_view proto = next_field(rest);
    // UNKNOWN: the proxy could not tell (another protocol, a health check); whatever follows
    // on the line is ignored and the connection keeps its own address.
    if (proto == "UNKNOWN") return result(Kind::Done, consumed);
    int family;
    if (proto == "TCP4")
        family = AF_INET;
    else if (proto == "TCP6")
        family = AF_INET6;
    else
        return result(Kind::Invalid);

    std::string_view src = next_field(rest), dst = next_field(rest);
    std::string_view sport = next_field(rest), dport = rest;
    uint8_t src_bytes[16], dst_bytes[16];
    uint16_t src_port = 0, dst_port = 0;
    if (!parse_address(src, family, src_bytes) || !parse_address(dst, family, dst_bytes) ||
        !parse_port(sport, src_port) || !parse_port(dport, dst_port))
        return result(Kind::Invalid);

    ProxyHeader h = result(Kind::Done, consumed);
    h.has_source = true;
    if (family == AF_INET) {
        auto& a = reinterpret_cast<sockaddr_in&>(h.source);
        a.sin_family = AF_INET;
        a.sin_port = htons(src_port);
        std::memcpy(&a.sin_addr, src_bytes, 4);
    } else {
        auto& a = reinterpret_cast<sockaddr_in6&>(h.source);
        a.sin6_family = AF_INET6;
        a.sin6_port = htons(src_port);
        std::memcpy(&a.sin6_addr, src_bytes, 16);
    }
    return h;
}

// The binary form: signature, 0x2? (version 2, command LOCAL 0 or PROXY 1), family and
// transport, a big-endian length, then addresses and TLVs.
ProxyHeader parse_v2(std::string_view in, size_t max_header) {
    const auto byte = [&](size_t i) { return static_cast<uint8_t>(in[i]); };
    const size_t sig = kV2Signature.size();
    if (in.size() <= sig) return result(Kind::Incomplete);
    const uint8_t version = byte(sig) >> 4, command = byte(sig) & 0x0f;
    if (version != 2 || command > 1) return result(Kind::Invalid);
    const bool local = command == 0;
    if (in.size() <= sig + 1) return result(Kind::Incomplete);
    const uint8_t family = byte(sig + 1) >> 4, transport = byte(sig + 1) & 0x0f;
    // LOCAL (the proxy's own connection, e.g. a health check) ignores the family.
    if (!local && (family > 3 || transport > 2)) return result(Kind::Invalid);
    if (in.size() < kV2Fixed) return result(Kind::Incomplete);
    const size_t length = size_t(byte(14)) << 8 | byte(15);
    if (kV2Fixed + length > std::min(max_header, kMaxProxyHeader)) return result(Kind::Invalid);
    // The addresses must fit in the length (TLVs may follow them, and are skipped).
    static constexpr size_t kAddressBytes[4] = {0, 12, 36, 216};  // UNSPEC, INET, INET6, UNIX
    if (!local && length < kAddressBytes[family]) return result(Kind::Invalid);
    if (in.size() < kV2Fixed + length) return result(Kind::Incomplete);

    ProxyHeader h = result(Kind::Done, kV2Fixed + length);
    if (local) return h;
    const char* a = in.data() + kV2Fixed;
    if (family == 1) {
        auto& s = reinterpret_cast<sockaddr_in&>(h.source);
        s.sin_family = AF_INET;
        std::memcpy(&s.sin_addr, a, 4);
        std::memcpy(&s.sin_port, a + 8, 2);  // both in network order
        h.has_source = true;
    } else if (family == 2) {
        auto& s = reinterpret_cast<sockaddr_in6&>(h.source);
        s.sin6_family = AF_INET6;
        std::memcpy(&s.sin6_addr, a, 16);
        std::memcpy(&s.sin6_port, a + 32, 2);
        h.has_source = true;
    }
    // UNSPEC and UNIX: nothing an IP client address can be made of; keep the connection's own.
    return h;
}

}  // namespace

ProxyHeader parse_proxy_header(std::string_view in, size_t max_header) {
    if (in.empty()) return result(Kind::Incomplete);
    const Kind v1 = match_signature(in, kV1Signature);
    if (v1 == Kind::Incomplete) return result(Kind::Incomplete);
    if (v1 == Kind::Done) return parse_v1(in);
    const Kind v2 = match_signature(in, kV2Signature);
    if (v2 == Kind::Incomplete) return result(Kind::Incomplete);
    if (v2 == Kind::Done) return parse_v2(in, max_header);
    return result(Kind::Absent);
}

}  // namespace rivet::net
