// Route patterns split and checked: what a pattern may be is said in router.hpp.
#include "app/routing/route_pattern.hpp"

#include <stdexcept>
#include <string>

namespace rivet::app::route_pattern {

namespace {

bool is_name_char(char c) {
    return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '_';
}

[[noreturn]] void bad_pattern(std::string_view pattern, const char* why) {
    throw std::invalid_argument("rivet::Router: malformed route pattern \"" + std::string(pattern) +
                                "\": " + why);
}

// A parameter or wildcard that opens at p[i] (':' or '*'); returns where its segment ends.
size_t parameter(std::string_view p, size_t i, std::vector<Token>& out) {
    const bool wild = p[i] == '*';
    size_t j = i + 1;
    while (j < p.size() && is_name_char(p[j])) ++j;
    std::string_view name = p.substr(i + 1, j - i - 1);
    if (name.empty()) bad_pattern(p, "empty parameter name");
    for (const Token& t : out)
        if (t.kind != Token::Static && t.text == name) bad_pattern(p, "parameter name used twice");
    std::unique_ptr<RouteConstraint> constraint;
    if (j < p.size() && (p[j] == '<' || p[j] == '(')) {
        if (wild) bad_pattern(p, "a wildcard takes no constraint");
        try {
            const size_t end = RouteConstraint::end_of(p, j);
            constraint = std::make_unique<RouteConstraint>(p.substr(j, end - j));
            j = end;
        } catch (const std::invalid_argument& e) {
            bad_pattern(p, e.what());
        }
    }
    if (wild && j != p.size()) bad_pattern(p, "wildcard must be the last segment");
    if (j < p.size() && p[j] != '/')
        bad_pattern(p,
                    "a parameter is a whole segment: a name of [A-Za-z0-9_], then optionally "
                    "<type> or (expression)");
    out.push_back({wild ? Token::Wildcard : Token::Param, name, std::move(constraint)});
    return j;
}

}  // namespace

std::vector<Token> tokenize(std::string_view p, size_t max_params) {
    if (p.empty() || p[0] != '/') bad_pattern(p, "must start with '/'");
    for (char c : p) {  // expressions may hold a space, '?' or '#'; static runs are checked below
        auto u = static_cast<unsigned char>(c);
        if (u < 0x20 || u == 0x7f) bad_pattern(p, "contains a control byte");
    }
    std::vector<Token> out;
    size_t names = 0;
    size_t i = 0;
    while (i < p.size()) {
        const bool seg_start = i > 0 && p[i - 1] == '/';
        if (seg_start && (p[i] == ':' || p[i] == '*')) {
            if (++names > max_params) bad_pattern(p, "too many parameters");
            i = parameter(p, i, out);
            continue;
        }
        // A static run stops just before the next ':' or '*' that opens a segment.
        size_t j = i + 1;
        while (j < p.size() && !(p[j - 1] == '/' && (p[j] == ':' || p[j] == '*'))) ++j;
        std::string_view run = p.substr(i, j - i);
        if (run.find_first_of(" ?#") != std::string_view::npos)
            bad_pattern(p, "contains a space, '?' or '#'");
        out.push_back({Token::Static, run});
        i = j;
    }
    return out;
}

}  // namespace rivet::app::route_pattern
