#include "net/proxy_header.hpp"

#include <arpa/inet.h>
#include <gtest/gtest.h>
#include <netinet/in.h>

#include <string>

using namespace rivet::net;
using Kind = ProxyHeader::Kind;

namespace {

const std::string kSig("\r\n\r\n\0\r\nQUIT\n", 12);

std::string source_text(const ProxyHeader& h) {
    char buf[INET6_ADDRSTRLEN] = "";
    if (h.source.ss_family == AF_INET)
        inet_ntop(AF_INET, &reinterpret_cast<const sockaddr_in&>(h.source).sin_addr, buf,
                  sizeof buf);
    else if (h.source.ss_family == AF_INET6)
        inet_ntop(AF_INET6, &reinterpret_cast<const sockaddr_in6&>(h.source).sin6_addr, buf,
                  sizeof buf);
    return buf;
}

unsigned source_port(const ProxyHeader& h) {
    return h.source.ss_family == AF_INET6
               ? ntohs(reinterpret_cast<const sockaddr_in6&>(h.source).sin6_port)
               : ntohs(reinterpret_cast<const sockaddr_in&>(h.source).sin_port);
}

// A version 2 header: command (0 LOCAL, 1 PROXY), family/transport byte, the address block and
// any TLV bytes after it; `length` overrides the length field when set.
std::string v2(uint8_t command, uint8_t family, const std::string& block, int length = -1) {
    std::string h = kSig;
    h += char(0x20 | command);
    h += char(family);
    size_t len = length < 0 ? block.size() : size_t(length);
    h += char(len >> 8);
    h += char(len & 0xff);
    return h + block;
}

std::string v4_block(const char* src, const char* dst, uint16_t sport, uint16_t dport) {
    std::string b(12, '\0');
    inet_pton(AF_INET, src, b.data());
    inet_pton(AF_INET, dst, b.data() + 4);
    b[8] = char(sport >> 8), b[9] = char(sport & 0xff);
    b[10] = char(dport >> 8), b[11] = char(dport & 0xff);
    return b;
}

std::string v6_block(const char* src, const char* dst, uint16_t sport, uint16_t dport) {
    std::string b(36, '\0');
    inet_pton(AF_INET6, src, b.data());
    inet_pton(AF_INET6, dst, b.data() + 16);
    b[32] = char(sport >> 8), b[33] = char(sport & 0xff);
    b[34] = char(dport >> 8), b[35] = char(dport & 0xff);
    return b;
}

// Every prefix of a valid header is Incomplete; the whole of it, with anything after it, gives
// the same result.
ProxyHeader parse_bytewise(const std::string& header, const std::string& after = "GET / HTTP/1.1") {
    for (size_t n = 0; n < header.size(); ++n)
        EXPECT_EQ(parse_proxy_header(std::string_view(header).substr(0, n)).kind, Kind::Incomplete)
            << "prefix of " << n << " bytes";
    ProxyHeader whole = parse_proxy_header(header);
    ProxyHeader more = parse_proxy_header(header + after);
    EXPECT_EQ(more.kind, whole.kind);
    EXPECT_EQ(more.consumed, whole.consumed);
    EXPECT_EQ(more.has_source, whole.has_source);
    return more;
}

// An invalid header is refused at some prefix, and every longer input stays refused.
void expect_invalid(const std::string& bytes) {
    bool refused = false;
    for (size_t n = 1; n <= bytes.size(); ++n) {
        Kind k = parse_proxy_header(std::string_view(bytes).substr(0, n)).kind;
        if (refused) {
            EXPECT_EQ(k, Kind::Invalid)
                << "at " << n << " bytes of " << testing::PrintToString(bytes);
        } else {
            EXPECT_TRUE(k == Kind::Incomplete || k == Kind::Invalid) << n;
            refused = k == Kind::Invalid;
        }
    }
    EXPECT_TRUE(refused) << testing::PrintToString(bytes);
}

}  // namespace

TEST(ProxyHeader, V1Tcp4) {
    const std::string line = "PROXY TCP4 192.0.2.7 198.51.100.2 56324 443\r\n";
    ProxyHeader h = parse_bytewise(line);
    ASSERT_EQ(h.kind, Kind::Done);
    EXPECT_EQ(h.consumed, line.size());
    ASSERT_TRUE(h.has_source);
    EXPECT_EQ(h.source.ss_family, AF_INET);
    EXPECT_EQ(source_text(h), "192.0.2.7");
    EXPECT_EQ(source_port(h), 56324u);
}

TEST(ProxyHeader, V1Tcp6) {
    const std::string line = "PROXY TCP6 2001:db8::5 2001:db8::1 0 65535\r\n";
    ProxyHeader h = parse_bytewise(line);
    ASSERT_EQ(h.kind, Kind::Done);
    EXPECT_EQ(h.consumed, line.size());
    ASSERT_TRUE(h.has_source);
    EXPECT_EQ(h.source.ss_family, AF_INET6);
    EXPECT_EQ(source_text(h), "2001:db8::5");
    EXPECT_EQ(source_port(h), 0u);
}

TEST(ProxyHeader, V1UnknownKeepsTheConnectionsAddress) {
    for (std::string line : {"PROXY UNKNOWN\r\n", "PROXY UNKNOWN ffff::1 ffff::2 1 2\r\n",
                             "PROXY UNKNOWN whatever is here\r\n"}) {
        ProxyHeader h = parse_bytewise(line);
        EXPECT_EQ(h.kind, Kind::Done) << line;
        EXPECT_EQ(h.consumed, line.size());
        EXPECT_FALSE(h.has_source);
    }
}

TEST(ProxyHeader, V1LongestLineAndOneMore) {
    // The specification's worst case: 107 bytes with CRLF.
    const std::string addr = "ffff:ffff:ffff:ffff:ffff:ffff:ffff:ffff";
    const std::string longest = "PROXY UNKNOWN " + addr + " " + addr + " 65535 65535\r\n";
    ASSERT_EQ(longest.size(), kMaxProxyV1Line);
    EXPECT_EQ(parse_bytewise(longest).kind, Kind::Done);
    ProxyHeader tcp6 = parse_bytewise("PROXY TCP6 " + addr + " " + addr + " 65535 65535\r\n");
    EXPECT_EQ(tcp6.kind, Kind::Done);
    EXPECT_EQ(source_text(tcp6), addr);
    // One byte more (UNKNOWN ignores its contents, so only the length can refuse it).
    std::string over = "PROXY UNKNOWN " + std::string(kMaxProxyV1Line - 16 + 1, 'x') + "\r\n";
    ASSERT_EQ(over.size(), kMaxProxyV1Line + 1);
    expect_invalid(over);
    EXPECT_EQ(parse_proxy_header(over.substr(0, kMaxProxyV1Line - 1)).kind, Kind::Incomplete);
    EXPECT_EQ(parse_proxy_header(over.substr(0, kMaxProxyV1Line)).kind, Kind::Invalid);
    // No line end at all.
    expect_invalid("PROXY TCP4 " + std::string(200, '1'));
}

TEST(ProxyHeader, V1Refusals) {
    for (std::string bad : {
             "PROXY TCP5 1.2.3.4 5.6.7.8 1 2\r\n",       // protocol
             "PROXY tcp4 1.2.3.4 5.6.7.8 1 2\r\n",       // case matters
             "PROXY TCP4 1.2.3.4 5.6.7.8 1 2\n",         // LF alone
             "PROXY TCP4 1.2.3.4 5.6.7.8 1 2\rX\n",      // CR alone
             "PROXY TCP4 1.2.3.4 5.6.7.8 1\r\n",         // a field missing
             "PROXY TCP4 1.2.3.4 5.6.7.8 1 2 3\r\n",     // one too many
             "PROXY TCP4  1.2.3.4 5.6.7.8 1 2\r\n",      // two spaces
             "PROXY TCP4 1.2.3.4 5.6.7.8 1 2 \r\n",      // trailing space
             "PROXY TCP4 1.2.3 5.6.7.8 1 2\r\n",         // address
             "PROXY TCP4 1.2.3.4 5.6.7.256 1 2\r\n",     // destination address
             "PROXY TCP4 ::1 5.6.7.8 1 2\r\n",           // family mismatch
             "PROXY TCP6 1.2.3.4 ::1 1 2\r\n",           // family mismatch
             "PROXY TCP4 1.2.3.4 5.6.7.8 65536 2\r\n",   // port range
             "PROXY TCP4 1.2.3.4 5.6.7.8 1 99999\r\n",   // port range
             "PROXY TCP4 1.2.3.4 5.6.7.8 01 2\r\n",      // leading zero
             "PROXY TCP4 1.2.3.4 5.6.7.8 -1 2\r\n",      // sign
             "PROXY TCP4 1.2.3.4 5.6.7.8 1 0x2\r\n",     // not decimal
             "PROXY TCP4 1.2.3.4 5.6.7.8 123456 2\r\n",  // too many digits
             "PROXY TCP4 1.2.3.4\t5.6.7.8 1 2\r\n",      // control byte
             "PROXY \r\n",                               // nothing
         })
        expect_invalid(bad);
    std::string nul("PROXY TCP4 1.2.3.4\0 5.6.7.8 1 2\r\n", 33);
    expect_invalid(nul);
    std::string high = "PROXY TCP4 1.2.3.4 5.6.7.8 1 2\xff\r\n";
    expect_invalid(high);
}

TEST(ProxyHeader, V2ProxyIpv4WithTlvsSkipped) {
    std::string tlv = std::string("\x04\x00\x03", 3) + "abc";  // PP2_TYPE_NOOP, 3 bytes
    std::string h2 = v2(1, 0x11, v4_block("203.0.113.9", "10.0.0.1", 40000, 8080) + tlv);
    ProxyHeader h = parse_bytewise(h2);
    ASSERT_EQ(h.kind, Kind::Done);
    EXPECT_EQ(h.consumed, 16u + 12 + tlv.size());
    ASSERT_TRUE(h.has_source);
    EXPECT_EQ(h.source.ss_family, AF_INET);
    EXPECT_EQ(source_text(h), "203.0.113.9");
    EXPECT_EQ(source_port(h), 40000u);
}

TEST(ProxyHeader, V2ProxyIpv6) {
    std::string h2 = v2(1, 0x21, v6_block("2001:db8::77", "2001:db8::1", 443, 8080));
    ProxyHeader h = parse_bytewise(h2);
    ASSERT_EQ(h.kind, Kind::Done);
    EXPECT_EQ(h.consumed, 16u + 36);
    ASSERT_TRUE(h.has_source);
    EXPECT_EQ(h.source.ss_family, AF_INET6);
    EXPECT_EQ(source_text(h), "2001:db8::77");
    EXPECT_EQ(source_port(h), 443u);
}

TEST(ProxyHeader, V2LocalUnspecAndUnixKeepTheConnectionsAddress) {
    // LOCAL: the proxy's own connection (a health check); the family and block are ignored,
    // even a family byte that PROXY would refuse.
    for (std::string h2 :
         {v2(0, 0x00, ""), v2(0, 0x11, v4_block("1.2.3.4", "5.6.7.8", 1, 2)), v2(0, 0xff, "xyz"),
          v2(1, 0x00, ""), v2(1, 0x00, "tlvs"), v2(1, 0x31, std::string(216, 'u')),
          v2(1, 0x32, std::string(220, 'u'))}) {
        ProxyHeader h = parse_bytewise(h2);
        EXPECT_EQ(h.kind, Kind::Done) << testing::PrintToString(h2);
        EXPECT_EQ(h.consumed, h2.size());
        EXPECT_FALSE(h.has_source);
    }
}

TEST(ProxyHeader, V2Refusals) {
    std::string block = v4_block("1.2.3.4", "5.6.7.8", 1, 2);
    std::string bad_version = v2(1, 0x11, block);
    bad_version[12] = 0x11;  // version 1 in the binary form
    expect_invalid(bad_version);
    std::string bad_command = v2(1, 0x11, block);
    bad_command[12] = 0x22;
    expect_invalid(bad_command);
    expect_invalid(v2(1, 0x41, block));                   // family 4
    expect_invalid(v2(1, 0x13, block));                   // transport 3
    expect_invalid(v2(1, 0x11, block.substr(0, 11)));     // INET needs 12 bytes
    expect_invalid(v2(1, 0x21, std::string(35, '\0')));   // INET6 needs 36
    expect_invalid(v2(1, 0x31, std::string(215, '\0')));  // UNIX needs 216
}

TEST(ProxyHeader, V2LengthCap) {
    const size_t room = kMaxProxyHeader - 16;
    std::string fits =
        v2(1, 0x11, v4_block("1.2.3.4", "5.6.7.8", 1, 2) + std::string(room - 12, 'T'));
    ASSERT_EQ(fits.size(), kMaxProxyHeader);
    ProxyHeader h = parse_proxy_header(fits);
    EXPECT_EQ(h.kind, Kind::Done);
    EXPECT_EQ(h.consumed, kMaxProxyHeader);
    // One byte over is refused as soon as the length is read, before the rest arrives.
    std::string over = v2(1, 0x11, "", int(room + 1));
    ASSERT_EQ(over.size(), 16u);
    EXPECT_EQ(parse_proxy_header(over.substr(0, 15)).kind, Kind::Incomplete);
    EXPECT_EQ(parse_proxy_header(over).kind, Kind::Invalid);
    EXPECT_EQ(parse_proxy_header(v2(1, 0x11, "", 0xffff)).kind, Kind::Invalid);
    // A caller's smaller bound.
    std::string small = v2(1, 0x11, v4_block("1.2.3.4", "5.6.7.8", 1, 2) + "TLV");
    EXPECT_EQ(parse_proxy_header(small, small.size()).kind, Kind::Done);
    EXPECT_EQ(parse_proxy_header(small, small.size() - 1).kind, Kind::Invalid);
    // Truncated: the length promises more than has arrived.
    EXPECT_EQ(parse_proxy_header(fits.substr(0, fits.size() - 1)).kind, Kind::Incomplete);
}

TEST(ProxyHeader, AbsentWhenNeitherSignature) {
    const std::string plains[] = {"GET / HTTP/1.1\r\n",
                                  "PROPFIND / HTTP/1.1\r\n",
                                  "POST",
                                  "P R",
                                  "proxy TCP4",
                                  "PROXY\r\n",
                                  "\r\n\r\nGET",
                                  std::string("\r\n\r\n\0\r\nQUIX", 12)};
    for (const std::string& plain : plains) {
        EXPECT_EQ(parse_proxy_header(plain).kind, Kind::Absent) << testing::PrintToString(plain);
    }
    // Prefixes of either signature cannot be told yet.
    EXPECT_EQ(parse_proxy_header("").kind, Kind::Incomplete);
    EXPECT_EQ(parse_proxy_header("PRO").kind, Kind::Incomplete);
    EXPECT_EQ(parse_proxy_header("PROXY").kind, Kind::Incomplete);
    EXPECT_EQ(parse_proxy_header(std::string_view(kSig).substr(0, 7)).kind, Kind::Incomplete);
    // A bare CRLF (allowed before an HTTP request) is a prefix of the v2 signature: it waits.
    EXPECT_EQ(parse_proxy_header("\r\n").kind, Kind::Incomplete);
}

TEST(ProxyHeader, TruncatedAtEveryByte) {
    const std::string all[] = {
        "PROXY TCP4 192.0.2.7 198.51.100.2 56324 443\r\n",
        v2(1, 0x11, v4_block("1.2.3.4", "5.6.7.8", 1, 2)),
        v2(1, 0x21, v6_block("::1", "::2", 1, 2) + std::string(40, 'T')),
    };
    for (const std::string& h : all)
        for (size_t n = 0; n < h.size(); ++n)
            EXPECT_EQ(parse_proxy_header(h.substr(0, n)).kind, Kind::Incomplete) << n;
}
