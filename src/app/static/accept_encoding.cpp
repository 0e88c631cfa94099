#include "app/static/accept_encoding.hpp"

namespace rivet::files {

namespace {

std::string_view trim(std::string_view s) {
    while (!s.empty() && (s.front() == ' ' || s.front() == '\t')) s.remove_prefix(1);
    while (!s.empty() && (s.back() == ' ' || s.back() == '\t')) s.remove_suffix(1);
    return s;
}

bool iequals(std::string_view a, std::string_view b) {
    if (a.size() != b.size()) return false;
    for (size_t i = 0; i < a.size(); ++i)
        if ((a[i] | 0x20) != (b[i] | 0x20)) return false;
    return true;
}

// q is "0", "0.", "0.0", "0.00" or "0.000" exactly when it refuses: any other digit is above 0.
bool q_is_zero(std::string_view params) {
    while (!params.empty()) {
        size_t semi = params.find(';');
        std::string_view p = trim(params.substr(0, semi));
        params = semi == std::string_view::npos ? std::string_view{} : params.substr(semi + 1);
        if (p.size() < 2 || (p[0] | 0x20) != 'q' || p[1] != '=') continue;
        for (char c : p.substr(2))
            if (c != '0' && c != '.') return false;
        return true;
    }
    return false;
}

}  // namespace

bool accepts_coding(std::string_view accept_encoding, std::string_view coding) {
    int star = -1;  // -1: no "*"; 0: "*;q=0"; 1: "*" accepted
    while (!accept_encoding.empty()) {
        size_t comma = accept_encoding.find(',');
        std::string_view item = accept_encoding.substr(0, comma);
        accept_encoding = comma == std::string_view::npos ? std::string_view{}
                                                          : accept_encoding.substr(comma + 1);
        size_t semi = item.find(';');
        std::string_view name = trim(item.substr(0, semi));
        std::string_view params =
            semi == std::string_view::npos ? std::string_view{} : item.substr(semi + 1);
        if (iequals(name, coding)) return !q_is_zero(params);
        if (name == "*") star = q_is_zero(params) ? 0 : 1;
    }
    return star == 1;
}

}  // namespace rivet::files
