#include "app/compression/compressible_type.hpp"

#include "http/byte_scan.hpp"
#include "http/request_parser.hpp"

namespace rivet::app {

namespace {

bool ends_with_nocase(std::string_view s, std::string_view suffix) {
    return s.size() >= suffix.size() && http::iequals(s.substr(s.size() - suffix.size()), suffix);
}

bool matches(std::string_view type, std::string_view subtype, std::string_view pattern) {
    size_t slash = pattern.find('/');
    std::string_view ptype = pattern.substr(0, slash), psub = pattern.substr(slash + 1);
    if (!http::iequals(type, ptype)) return false;
    if (psub == "*") return true;
    if (psub.size() > 2 && psub[0] == '*' && psub[1] == '+')
        return subtype.size() > psub.size() - 1 && ends_with_nocase(subtype, psub.substr(1));
    return http::iequals(subtype, psub);
}

}  // namespace

bool valid_type_pattern(std::string_view pattern) {
    size_t slash = pattern.find('/');
    if (slash == 0 || slash == std::string_view::npos || slash + 1 == pattern.size()) return false;
    std::string_view sub = pattern.substr(slash + 1);
    if (pattern.substr(0, slash).find('*') != std::string_view::npos) return false;
    if (sub == "*") return true;
    if (sub.starts_with("*+")) return sub.size() > 2 && sub.find('*', 1) == std::string_view::npos;
    return sub.find('*') == std::string_view::npos;
}

bool compressible_type(std::string_view content_type, const std::vector<std::string>& patterns) {
    std::string_view media =
        http::byte_scan::trim_ows(content_type.substr(0, content_type.find(';')));
    size_t slash = media.find('/');
    if (slash == std::string_view::npos || slash == 0 || slash + 1 == media.size()) return false;
    std::string_view type = media.substr(0, slash), subtype = media.substr(slash + 1);
    // Server-Sent Events are read as they come: a compressor's buffer would hold them back
    // (the framework's event streams are streamed bodies, never compressed anyway).
    if (http::iequals(type, "text") && http::iequals(subtype, "event-stream")) return false;
    for (const std::string& p : patterns)
        if (matches(type, subtype, p)) return true;
    return false;
}

}  // namespace rivet::app
