// rivet::Cookie: a cookie a response sets (RFC 6265bis), with every attribute.
//
//   res.cookie({.name = "theme", .value = "dark", .max_age = std::chrono::days(365),
//               .same_site = rivet::SameSite::Lax});
//   res.delete_cookie("theme");
//   std::optional<std::string_view> theme = req.cookie("theme");   // reading: rivet::Request
//
// Each cookie is its own Set-Cookie field; a response may set several. Response::cookie throws
// std::invalid_argument (a 500 when it escapes a handler, never a malformed field on the wire)
// for a name that is not a token, a value outside the cookie-octets (no spaces, DQUOTE inside,
// ',', ';', '\' or controls: encode such values, e.g. base64url), a Path or Domain holding ';'
// or controls, and SameSite=None without Secure (browsers drop it).
#pragma once

#include <chrono>
#include <optional>
#include <string>

namespace rivet {

// Whether a browser sends the cookie with requests that come from other sites. Unset: no
// attribute (browsers then default to Lax).
enum class SameSite { Unset, Strict, Lax, None };

struct Cookie {
    std::string name;
    std::string value{};
    std::string path{};    // "" : no attribute (the browser takes the request's directory)
    std::string domain{};  // "" : host-only (only the host that set it gets it back)
    // Lifetime: Max-Age wins over Expires in browsers that know both. Neither: a session cookie
    // (gone when the browser closes).
    std::optional<std::chrono::seconds> max_age{};
    std::optional<std::chrono::system_clock::time_point> expires{};
    bool secure = false;     // sent over HTTPS only
    bool http_only = false;  // hidden from scripts (document.cookie)
    SameSite same_site = SameSite::Unset;
    bool partitioned = false;  // CHIPS: kept per top-level site; needs Secure
};

}  // namespace rivet
