// Reading the numeric inputs of the demo endpoints with errors a person can act on.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

#include <nlohmann/json.hpp>

namespace rivet::server {

// Either a value or the reason there is none ("number must be an integer").
template <typename T>
struct Parsed {
    std::optional<T> value;
    std::string error;
};

// A non-negative decimal integer no larger than `max`; `what` names it in errors.
Parsed<uint64_t> parse_count(std::string_view text, uint64_t max, std::string_view what);

// The same rules for a JSON value: an integer, or a string holding one.
Parsed<uint64_t> parse_json_count(const nlohmann::json& value, uint64_t max, std::string_view what);

// A finite decimal number (strtod syntax, nothing trailing).
Parsed<double> parse_real(std::string_view text, std::string_view what);

}  // namespace rivet::server
