#include "http/cookie.hpp"

#include "http/byte_scan.hpp"
#include "http/request_parser.hpp"

namespace rivet::http {

namespace {

bool is_cookie_octet(unsigned char c) {
    return c == 0x21 || (c >= 0x23 && c <= 0x2B) || (c >= 0x2D && c <= 0x3A) ||
           (c >= 0x3C && c <= 0x5B) || (c >= 0x5D && c <= 0x7E);
}

}  // namespace

bool is_cookie_name(std::string_view name) {
    return is_token(name);
}

bool is_cookie_value(std::string_view value) {
    if (value.size() >= 2 && value.front() == '"' && value.back() == '"')
        value = value.substr(1, value.size() - 2);
    for (unsigned char c : value)
        if (!is_cookie_octet(c)) return false;
    return true;
}

bool is_cookie_attribute_value(std::string_view value) {
    for (unsigned char c : value)
        if (c < 0x20 || c == 0x7F || c == ';') return false;
    return true;
}

std::optional<std::string_view> find_cookie(std::string_view cookie_field, std::string_view name) {
    while (!cookie_field.empty()) {
        const size_t semi = cookie_field.find(';');
        std::string_view pair = cookie_field.substr(0, semi);
        cookie_field =
            semi == std::string_view::npos ? std::string_view{} : cookie_field.substr(semi + 1);
        const size_t eq = pair.find('=');
        if (eq == std::string_view::npos || byte_scan::trim_ows(pair.substr(0, eq)) != name)
            continue;
        std::string_view value = byte_scan::trim_ows(pair.substr(eq + 1));
        if (value.size() >= 2 && value.front() == '"' && value.back() == '"')
            value = value.substr(1, value.size() - 2);
        return value;
    }
    return std::nullopt;
}

}  // namespace rivet::http
