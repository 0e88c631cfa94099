#include "client/url.hpp"

#include <cctype>
#include <charconv>

namespace rivet::client {

namespace {

bool ieq_prefix(std::string_view s, std::string_view p) {
    if (s.size() < p.size()) return false;
    for (size_t i = 0; i < p.size(); ++i) {
        char c = s[i];
        if (c >= 'A' && c <= 'Z') c = char(c | 0x20);
        if (c != p[i]) return false;
    }
    return true;
}

bool host_char(char c) {
    return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '-' ||
           c == '.' || c == '_';
}

bool target_char(char c) {
    return c > 0x20 && c < 0x7f && c != '#';
}

}  // namespace

std::string Url::origin() const {
    return std::string(tls ? "https://" : "http://") + host + ":" + std::to_string(port);
}

std::optional<Url> parse_url(std::string_view t, std::string* why) {
    const auto fail = [why](const char* w) {
        if (why) *why = w;
        return std::nullopt;
    };
    Url u;
    if (ieq_prefix(t, "http://")) {
        t.remove_prefix(7);
    } else if (ieq_prefix(t, "https://")) {
        u.tls = true;
        t.remove_prefix(8);
    } else {
        return fail("not an http:// or https:// URL");
    }
    if (const size_t hash = t.find('#'); hash != std::string_view::npos) t = t.substr(0, hash);
    const size_t end = t.find_first_of("/?");
    std::string_view auth = t.substr(0, end);
    const std::string_view rest = end == std::string_view::npos ? "" : t.substr(end);
    if (auth.find('@') != std::string_view::npos) return fail("userinfo in URL");
    std::string_view host, port;
    if (!auth.empty() && auth[0] == '[') {
        const size_t close = auth.find(']');
        if (close == std::string_view::npos) return fail("unclosed IPv6 literal");
        host = auth.substr(1, close - 1);
        for (char c : host)
            if (!(std::isxdigit(static_cast<unsigned char>(c)) || c == ':' || c == '.'))
                return fail("invalid IPv6 literal");
        const std::string_view after = auth.substr(close + 1);
        if (!after.empty()) {
            if (after[0] != ':') return fail("invalid authority");
            port = after.substr(1);
        }
    } else {
        const size_t colon = auth.rfind(':');
        host = auth.substr(0, colon);
        if (colon != std::string_view::npos) port = auth.substr(colon + 1);
        for (char c : host)
            if (!host_char(c)) return fail("invalid host");
    }
    if (host.empty()) return fail("empty host");
    u.host = std::string(host);
    u.port = u.tls ? 443 : 80;
    if (!port.empty()) {
        unsigned p = 0;
        const auto [ptr, ec] = std::from_chars(port.data(), port.data() + port.size(), p);
        if (ec != std::errc() || ptr != port.data() + port.size() || p == 0 || p > 65535)
            return fail("invalid port");
        u.port = uint16_t(p);
    }
    for (char c : rest)
        if (!target_char(c)) return fail("invalid character in URL path");
    u.target = rest.empty() || rest[0] == '?' ? "/" + std::string(rest) : std::string(rest);
    const bool v6 = u.host.find(':') != std::string::npos;
    u.authority = v6 ? "[" + u.host + "]" : u.host;
    if (u.port != (u.tls ? 443 : 80)) u.authority += ":" + std::to_string(u.port);
    return u;
}

std::optional<Url> resolve_location(const Url& base, std::string_view loc) {
    if (ieq_prefix(loc, "http://") || ieq_prefix(loc, "https://")) return parse_url(loc);
    const std::string origin = std::string(base.tls ? "https://" : "http://") + base.authority;
    if (loc.substr(0, 2) == "//")
        return parse_url(std::string(base.tls ? "https:" : "http:") + std::string(loc));
    if (!loc.empty() && loc[0] == '/') return parse_url(origin + std::string(loc));
    // A relative reference: beside the base path's last segment (no dot-segment removal).
    std::string dir = base.target.substr(0, base.target.find('?'));
    dir = dir.substr(0, dir.rfind('/') + 1);
    return parse_url(origin + dir + std::string(loc));
}

}  // namespace rivet::client
