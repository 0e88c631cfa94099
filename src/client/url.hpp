// client::Url: what the client needs of an http or https URL (RFC 3986 §3): the scheme, the host
// (a name, an IPv4 address or a bracketed IPv6 literal), the port and the request-target.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

namespace rivet::client {

struct Url {
    bool tls = false;
    std::string host;       // without brackets for an IPv6 literal
    uint16_t port = 0;      // the default for the scheme when the URL gives none
    std::string target;     // "/path?query" ("/" when the URL has no path); no fragment
    std::string authority;  // for the Host field: host[:port], the port only when not default

    // Pool key: connections are shared by requests with the same scheme, host and port.
    std::string origin() const;
};

// Parses an absolute http:// or https:// URL; nullopt and `why` when it is not one we can fetch
// (another scheme, userinfo, an empty or malformed host, a port out of range, bytes a URL
// cannot hold).
std::optional<Url> parse_url(std::string_view text, std::string* why = nullptr);

// `location` (a Location field's value) resolved against `base` (RFC 3986 §5.2, the forms
// servers send: absolute, scheme-relative "//host/p", absolute-path "/p", relative "p").
std::optional<Url> resolve_location(const Url& base, std::string_view location);

}  // namespace rivet::client
