#include "server/number_input.hpp"

#include <cmath>
#include <cstdlib>

namespace rivet::server {

namespace {

std::string_view trim(std::string_view s) {
    while (!s.empty() &&
           (s.front() == ' ' || s.front() == '\t' || s.front() == '\r' || s.front() == '\n'))
        s.remove_prefix(1);
    while (!s.empty() &&
           (s.back() == ' ' || s.back() == '\t' || s.back() == '\r' || s.back() == '\n'))
        s.remove_suffix(1);
    return s;
}

template <typename T>
Parsed<T> fail(std::string message) {
    return {std::nullopt, std::move(message)};
}

}  // namespace

Parsed<uint64_t> parse_count(std::string_view text, uint64_t max, std::string_view what) {
    std::string name(what);
    text = trim(text);
    if (text.empty()) return fail<uint64_t>(name + " is empty");
    bool negative = text.front() == '-';
    if (negative || text.front() == '+') text.remove_prefix(1);
    if (text.empty()) return fail<uint64_t>(name + " is not a number");
    uint64_t v = 0;
    bool too_large = false;
    for (size_t i = 0; i < text.size(); ++i) {
        char c = text[i];
        if (c == '.' || c == 'e' || c == 'E') {
            // "12.0" and "1e3" are numbers, just not integers: say so.
            char* end = nullptr;
            std::string whole(text);
            std::strtod(whole.c_str(), &end);
            if (end && *end == '\0') return fail<uint64_t>(name + " must be an integer");
            return fail<uint64_t>(name + " is not a number");
        }
        if (c < '0' || c > '9') return fail<uint64_t>(name + " is not a number");
        if (v > (UINT64_MAX - 9) / 10) too_large = true;
        if (!too_large) v = v * 10 + uint64_t(c - '0');
    }
    if (negative && (v != 0 || too_large)) return fail<uint64_t>(name + " must not be negative");
    if (too_large || v > max)
        return fail<uint64_t>(name + " must be at most " + std::to_string(max));
    return {v, {}};
}

Parsed<uint64_t> parse_json_count(const nlohmann::json& value, uint64_t max,
                                  std::string_view what) {
    std::string name(what);
    if (value.is_string()) return parse_count(value.get<std::string>(), max, what);
    if (value.is_number_unsigned()) {
        auto v = value.get<uint64_t>();
        if (v > max) return fail<uint64_t>(name + " must be at most " + std::to_string(max));
        return {v, {}};
    }
    if (value.is_number_integer()) {  // signed storage: may still be positive
        auto v = value.get<int64_t>();
        if (v < 0) return fail<uint64_t>(name + " must not be negative");
        if (uint64_t(v) > max)
            return fail<uint64_t>(name + " must be at most " + std::to_string(max));
        return {uint64_t(v), {}};
    }
    if (value.is_number_float()) {
        double d = value.get<double>();
        if (d < 0) return fail<uint64_t>(name + " must not be negative");
        return fail<uint64_t>(name + " must be an integer");
    }
    if (value.is_null()) return fail<uint64_t>("missing " + name);
    return fail<uint64_t>(name + " must be a number or a numeric string");
}

Parsed<double> parse_real(std::string_view text, std::string_view what) {
    std::string name(what);
    std::string s(trim(text));
    if (s.empty()) return fail<double>(name + " is empty");
    char* end = nullptr;
    double d = std::strtod(s.c_str(), &end);
    if (!end || *end != '\0') return fail<double>(name + " is not a number");
    if (!std::isfinite(d)) return fail<double>(name + " must be finite");
    return {d, {}};
}

}  // namespace rivet::server
