// Response::cookie and delete_cookie: Set-Cookie fields (RFC 6265bis §4.1), validated whole
// before one is added, so a bad cookie never reaches the wire.
#include <rivet/response.hpp>

#include <stdexcept>
#include <string>

#include "http/cookie.hpp"
#include "http/response_writer.hpp"

namespace rivet {

namespace {

void check(const Cookie& c) {
    auto refuse = [&](const std::string& why) {
        throw std::invalid_argument("cookie '" + c.name + "': " + why);
    };
    if (!http::is_cookie_name(c.name)) refuse("the name must be a token (RFC 9110 §5.6.2)");
    if (!http::is_cookie_value(c.value))
        refuse(
            "the value holds a byte outside the cookie-octets (space, DQUOTE, ',', ';', '\\', "
            "a control or non-ASCII): encode it, e.g. base64url");
    if (!http::is_cookie_attribute_value(c.path) || (!c.path.empty() && c.path[0] != '/'))
        refuse("Path must start with '/' and hold no ';' or controls");
    if (!http::is_cookie_attribute_value(c.domain) || c.domain.find(' ') != std::string::npos)
        refuse("Domain must hold no ';', space or controls");
    if (c.max_age && c.max_age->count() < 0) refuse("Max-Age must not be negative");
    if (c.same_site == SameSite::None && !c.secure)
        refuse("SameSite=None needs Secure (browsers drop it otherwise)");
    if (c.partitioned && !c.secure) refuse("Partitioned needs Secure");
    // The prefixes browsers enforce (RFC 6265bis §4.1.3): refuse what they would drop.
    if (c.name.starts_with("__Secure-") && !c.secure) refuse("a __Secure- cookie needs Secure");
    if (c.name.starts_with("__Host-") && (!c.secure || c.path != "/" || !c.domain.empty()))
        refuse("a __Host- cookie needs Secure, Path=/ and no Domain");
}

std::string set_cookie_value(const Cookie& c) {
    std::string out = c.name + "=" + c.value;
    if (!c.path.empty()) out += "; Path=" + c.path;
    if (!c.domain.empty()) out += "; Domain=" + c.domain;
    if (c.max_age) out += "; Max-Age=" + std::to_string(c.max_age->count());
    if (c.expires) {
        char date[29];
        http::format_http_date(
            std::chrono::duration_cast<std::chrono::seconds>(c.expires->time_since_epoch()).count(),
            date);
        out += "; Expires=";
        out.append(date, sizeof date);
    }
    if (c.secure) out += "; Secure";
    if (c.http_only) out += "; HttpOnly";
    switch (c.same_site) {
        case SameSite::Unset:
            break;
        case SameSite::Strict:
            out += "; SameSite=Strict";
            break;
        case SameSite::Lax:
            out += "; SameSite=Lax";
            break;
        case SameSite::None:
            out += "; SameSite=None";
            break;
    }
    if (c.partitioned) out += "; Partitioned";
    return out;
}

}  // namespace

Response& Response::cookie(const Cookie& cookie) {
    check(cookie);
    return header("Set-Cookie", set_cookie_value(cookie));
}

Response& Response::delete_cookie(std::string_view name, std::string_view path,
                                  std::string_view domain) {
    return cookie({.name = std::string(name),
                   .path = std::string(path),
                   .domain = std::string(domain),
                   .max_age = std::chrono::seconds(0),
                   .expires = std::chrono::system_clock::time_point{}});
}

}  // namespace rivet
