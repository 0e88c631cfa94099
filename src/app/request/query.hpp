// Percent-decoding and application/x-www-form-urlencoded parsing (query strings, form bodies).
#pragma once

#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace rivet::app {

// Decodes %XX escapes; with `plus_is_space`, '+' becomes ' ' (query strings and form bodies).
// Returns nullopt on a malformed escape ("%4", "%zz").
std::optional<std::string> percent_decode(std::string_view in, bool plus_is_space);

// Splits "a=1&b=2&c" into decoded pairs ("c" gives ("c", "")). Empty pieces ("a=1&&b=2") are
// skipped; a piece with a malformed escape is kept raw rather than dropped. Only the first '='
// splits ("a=b=c" gives ("a", "b=c")); "=x" gives an empty key. Repeated keys are all kept, in
// order. A key or value with a malformed escape is kept as sent; the other half is still decoded.
// "%00" decodes to a NUL byte, kept: callers that hand values to C APIs must check for it.
std::vector<std::pair<std::string, std::string>> parse_query(std::string_view query);

// The decoded value of the first piece whose decoded key equals `key` (same rules as
// parse_query; "a" alone gives ""); nullopt when no piece has that key. Allocates only for the
// returned value and for keys that contain escapes.
std::optional<std::string> form_value(std::string_view query_or_form, std::string_view key);

}  // namespace rivet::app
