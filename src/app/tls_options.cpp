#include "app/tls_options.hpp"

#include <cctype>
#include <stdexcept>

namespace rivet::app {

tls::Settings tls_settings(const TlsOptions& o, bool http2) {
    if (o.certificates.empty()) throw std::invalid_argument("tls: no certificate given");
    tls::Settings s;
    for (const auto& c : o.certificates) {
        if (c.cert_file.empty() || c.key_file.empty())
            throw std::invalid_argument("tls: a certificate needs both its files (cert \"" +
                                        c.cert_file + "\", key \"" + c.key_file + "\")");
        s.certificates.push_back({c.cert_file, c.key_file});
    }
    if (o.min_version == "1.2")
        s.min_version = tls::Version::Tls12;
    else if (o.min_version == "1.3")
        s.min_version = tls::Version::Tls13;
    else
        throw std::invalid_argument("tls: min_version must be \"1.2\" or \"1.3\", not \"" +
                                    o.min_version + "\"");
    s.ciphers = o.ciphers;
    s.allow_expired = o.allow_expired;
    s.ticket_key_lifetime_s = o.ticket_key_lifetime_s;
    s.session_cache_size = o.session_cache_size;
    s.ticket_key_file = o.ticket_key_file;
    s.alpn =
        http2 ? std::vector<std::string>{"h2", "http/1.1"} : std::vector<std::string>{"http/1.1"};
    return s;
}

std::string hsts_value(const TlsOptions& o) {
    if (o.hsts_max_age_s == 0) return {};
    std::string v = "max-age=" + std::to_string(o.hsts_max_age_s);
    if (o.hsts_include_subdomains) v += "; includeSubDomains";
    return v;
}

namespace {

// A host as it may stand in a URL: a registered name or IPv4 address (letters, digits, '-',
// '.', '_'), or an IPv6 literal in brackets. Anything else ('/', '@', '?', spaces ...) would
// change where the Location points.
bool usable_host(std::string_view h) {
    if (h.empty() || h.size() > 255) return false;
    if (h.front() == '[') {
        if (h.size() < 3 || h.back() != ']') return false;
        for (char c : h.substr(1, h.size() - 2))
            if (!(std::isxdigit(static_cast<unsigned char>(c)) || c == ':' || c == '.'))
                return false;
        return true;
    }
    for (char c : h)
        if (!(std::isalnum(static_cast<unsigned char>(c)) || c == '-' || c == '.' || c == '_'))
            return false;
    return true;
}

// "example.com:8080" -> "example.com", "[::1]:8080" -> "[::1]".
std::string_view without_port(std::string_view authority) {
    if (authority.starts_with('[')) {
        size_t end = authority.find(']');
        return end == authority.npos ? authority : authority.substr(0, end + 1);
    }
    return authority.substr(0, authority.find(':'));
}

}  // namespace

std::string url_host(std::string_view host) {
    if (host.find(':') == host.npos) return std::string(host);
    std::string bracketed = "[";
    bracketed.append(host).append("]");
    return bracketed;
}

std::string https_location(std::string_view authority, std::string_view listener_host,
                           uint16_t tls_port, std::string_view path, std::string_view query) {
    std::string_view name = without_port(authority);
    std::string out = "https://";
    if (usable_host(name)) {
        out += name;
    } else {
        out += url_host(listener_host);
    }
    if (tls_port != 443) {
        out += ':';
        out += std::to_string(tls_port);
    }
    out += path.empty() ? std::string_view("/") : path;
    if (!query.empty()) {
        out += '?';
        out += query;
    }
    return out;
}

}  // namespace rivet::app
