// IP addresses and networks: IPv4 and IPv6 in one 16-byte form (IPv4 as ::ffff:a.b.c.d), and
// networks in CIDR notation. For the lists of trusted peers: the PROXY protocol's (engine) and
// X-Forwarded-For's (app), the rate limiter's allow list, and the client address in logs.
#pragma once

#include <sys/socket.h>

#include <cstdint>
#include <cstring>
#include <string>
#include <string_view>
#include <vector>

namespace rivet::net {

struct IpAddress {
    uint8_t bytes[16] = {};

    bool is_v4() const;  // v4-mapped
    bool operator==(const IpAddress& o) const { return std::memcmp(bytes, o.bytes, 16) == 0; }
    static IpAddress v4(const uint8_t* four);
    static IpAddress v6(const uint8_t* sixteen);
    // An AF_INET or AF_INET6 socket address (any other family: all zeros).
    static IpAddress of(const sockaddr_storage& addr);
};

// Numeric IPv4 ("10.1.2.3") or IPv6 ("::1", "[::1]"); no names, no zone ids.
bool parse_ip(std::string_view text, IpAddress& out);
// The usual text: dotted quad for IPv4 (mapped or not), RFC 5952 for IPv6. Appends to `out`.
void format_ip(const IpAddress& ip, std::string& out);
std::string to_string(const IpAddress& ip);

struct IpNetwork {
    IpAddress base;       // with the host bits cleared
    unsigned prefix = 0;  // in bits of the 16-byte form (an IPv4 /8 is 96 + 8)

    bool contains(const IpAddress& ip) const;
};

// "10.0.0.0/8", "2001:db8::/32", or one address (a /32 or /128).
bool parse_network(std::string_view text, IpNetwork& out);

class NetworkList {
public:
    // Returns the entry that does not parse, or empty when all do.
    std::string assign(const std::vector<std::string>& entries);
    bool contains(const IpAddress& ip) const;
    bool empty() const { return networks_.empty(); }

private:
    std::vector<IpNetwork> networks_;
};

}  // namespace rivet::net
