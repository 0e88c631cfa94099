// Cookies (RFC 6265bis): reading the pairs of a request's Cookie field, and the grammar a
// Set-Cookie field's name, value and attribute values must keep to. Pure text, no allocation.
#pragma once

#include <optional>
#include <string_view>

namespace rivet::http {

// A cookie-name is a token (RFC 9110 §5.6.2), 1 byte at least.
bool is_cookie_name(std::string_view name);

// A cookie-value: cookie-octets (visible US-ASCII but DQUOTE, ',', ';' and '\'), optionally
// wrapped in one pair of DQUOTEs. Empty is allowed.
bool is_cookie_value(std::string_view value);

// An attribute value of Set-Cookie (Path, Domain): any CHAR but CTLs and ';'.
bool is_cookie_attribute_value(std::string_view value);

// The value of the first pair named `name` in one Cookie field ("a=1; b=2"), its DQUOTEs
// stripped; nullopt when no pair has that name. Lenient as browsers are: pieces without '=' are
// skipped, spaces and tabs around names and values are ignored. Names compare exactly (cookie
// names are case-sensitive).
std::optional<std::string_view> find_cookie(std::string_view cookie_field, std::string_view name);

}  // namespace rivet::http
