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
// skipped; a piece with a malformed escape is kept raw rather than dropped.
std::vector<std::pair<std::string, std::string>> parse_query(std::string_view query);

}  // namespace rivet::app
