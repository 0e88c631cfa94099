#include "net/ip_network.hpp"

#include <arpa/inet.h>
#include <netinet/in.h>

#include <charconv>

namespace rivet::net {

namespace {

constexpr uint8_t kV4Prefix[12] = {0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0xff, 0xff};

std::string_view trim(std::string_view s) {
    while (!s.empty() && (s.front() == ' ' || s.front() == '\t')) s.remove_prefix(1);
    while (!s.empty() && (s.back() == ' ' || s.back() == '\t')) s.remove_suffix(1);
    return s;
}

}  // namespace

bool IpAddress::is_v4() const {
    return std::memcmp(bytes, kV4Prefix, 12) == 0;
}

IpAddress IpAddress::v4(const uint8_t* four) {
    IpAddress ip;
    std::memcpy(ip.bytes, kV4Prefix, 12);
    std::memcpy(ip.bytes + 12, four, 4);
    return ip;
}

IpAddress IpAddress::v6(const uint8_t* sixteen) {
    IpAddress ip;
    std::memcpy(ip.bytes, sixteen, 16);
    return ip;
}

IpAddress IpAddress::of(const sockaddr_storage& addr) {
    if (addr.ss_family == AF_INET)
        return v4(
            reinterpret_cast<const uint8_t*>(&reinterpret_cast<const sockaddr_in&>(addr).sin_addr));
    if (addr.ss_family == AF_INET6)
        return v6(reinterpret_cast<const uint8_t*>(
            &reinterpret_cast<const sockaddr_in6&>(addr).sin6_addr));
    return {};
}

bool parse_ip(std::string_view text, IpAddress& out) {
    text = trim(text);
    if (text.size() >= 2 && text.front() == '[' && text.back() == ']')
        text = text.substr(1, text.size() - 2);
    if (text.empty() || text.size() >= INET6_ADDRSTRLEN) return false;
    char buf[INET6_ADDRSTRLEN];
    std::memcpy(buf, text.data(), text.size());
    buf[text.size()] = '\0';
    uint8_t raw[16];
    if (inet_pton(AF_INET, buf, raw) == 1) {
        out = IpAddress::v4(raw);
        return true;
    }
    if (inet_pton(AF_INET6, buf, raw) == 1) {
        out = IpAddress::v6(raw);
        return true;
    }
    return false;
}

void format_ip(const IpAddress& ip, std::string& out) {
    char buf[INET6_ADDRSTRLEN];
    const char* s = ip.is_v4() ? inet_ntop(AF_INET, ip.bytes + 12, buf, sizeof buf)
                               : inet_ntop(AF_INET6, ip.bytes, buf, sizeof buf);
    out += s ? s : "-";
}

std::string to_string(const IpAddress& ip) {
    std::string s;
    format_ip(ip, s);
    return s;
}

bool IpNetwork::contains(const IpAddress& ip) const {
    unsigned full = prefix / 8, rest = prefix % 8;
    if (std::memcmp(ip.bytes, base.bytes, full) != 0) return false;
    if (rest == 0) return true;
    uint8_t mask = uint8_t(0xff << (8 - rest));
    return (ip.bytes[full] & mask) == base.bytes[full];
}

bool parse_network(std::string_view text, IpNetwork& out) {
    text = trim(text);
    auto slash = text.find('/');
    IpAddress ip;
    if (!parse_ip(text.substr(0, slash), ip)) return false;
    unsigned max = ip.is_v4() ? 32 : 128;
    unsigned bits = max;
    if (slash != std::string_view::npos) {
        auto p = text.substr(slash + 1);
        auto r = std::from_chars(p.data(), p.data() + p.size(), bits);
        if (p.empty() || r.ec != std::errc() || r.ptr != p.data() + p.size() || bits > max)
            return false;
    }
    out.prefix = bits + (ip.is_v4() ? 96 : 0);
    for (unsigned i = 0; i < 16; ++i) {
        unsigned keep = out.prefix > i * 8 ? std::min(8u, out.prefix - i * 8) : 0;
        ip.bytes[i] &= uint8_t(keep == 0 ? 0 : 0xff << (8 - keep));
    }
    out.base = ip;
    return true;
}

std::string NetworkList::assign(const std::vector<std::string>& entries) {
    std::vector<IpNetwork> parsed;
    for (const auto& e : entries) {
        IpNetwork n;
        if (!parse_network(e, n)) return e.empty() ? std::string("\"\"") : e;
        parsed.push_back(n);
    }
    networks_ = std::move(parsed);
    return {};
}

bool NetworkList::contains(const IpAddress& ip) const {
    for (const auto& n : networks_)
        if (n.contains(ip)) return true;
    return false;
}

}  // namespace rivet::net
