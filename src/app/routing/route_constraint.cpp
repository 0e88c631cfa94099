// RouteConstraint: typed checks are hand-written scans (no allocation); expressions use
// std::regex, compiled once when the route is added.
//
// With libstdc++ the expression is compiled in its polynomial mode: matching runs as a
// breadth-first automaton, so its stack stays flat and its time linear in the segment, whatever
// the expression ("(a+)+" on 22 hostile bytes takes ~300 ms backtracking, microseconds here).
// That mode has no back-references; they are refused when the route is added. Other standard
// libraries backtrack: avoid nested quantifiers there.
#include "app/routing/route_constraint.hpp"

#include <charconv>
#include <stdexcept>

namespace rivet::app {

namespace {

bool is_hex(char c) {
    return (c >= '0' && c <= '9') || (c >= 'a' && c <= 'f') || (c >= 'A' && c <= 'F');
}

template <class T>
bool parses_as(std::string_view s) {
    T value;
    auto [end, ec] = std::from_chars(s.data(), s.data() + s.size(), value);
    return ec == std::errc() && end == s.data() + s.size();
}

bool is_uuid(std::string_view s) {
    if (s.size() != 36) return false;
    for (size_t i = 0; i < s.size(); ++i) {
        const bool dash_here = i == 8 || i == 13 || i == 18 || i == 23;
        if (dash_here ? s[i] != '-' : !is_hex(s[i])) return false;
    }
    return true;
}

constexpr auto kRegexFlags = std::regex::ECMAScript | std::regex::nosubs | std::regex::optimize
#if defined(__GLIBCXX__)
                             | std::regex_constants::__polynomial
#endif
    ;

}  // namespace

RouteConstraint::RouteConstraint(std::string_view spec) : spec_(spec) {
    if (spec.starts_with('(')) {
        if (spec == "()") throw std::invalid_argument("empty expression \"()\"");
        kind_ = Kind::Pattern;
        try {
            regex_ = std::make_unique<const std::regex>(spec_, kRegexFlags);
        } catch (const std::regex_error& e) {
            throw std::invalid_argument("invalid expression " + spec_ + ": " + e.what());
        }
        return;
    }
    if (spec == "<int>") {
        kind_ = Kind::Int;
    } else if (spec == "<uint>") {
        kind_ = Kind::Uint;
    } else if (spec == "<hex>") {
        kind_ = Kind::Hex;
    } else if (spec == "<uuid>") {
        kind_ = Kind::Uuid;
    } else {
        throw std::invalid_argument("unknown parameter type " + spec_ +
                                    " (types: <int>, <uint>, <hex>, <uuid>)");
    }
}

bool RouteConstraint::matches(std::string_view s) const {
    switch (kind_) {
        case Kind::Int:
            return parses_as<int64_t>(s);
        case Kind::Uint:
            return parses_as<uint64_t>(s);
        case Kind::Hex:
            if (s.empty()) return false;
            for (char c : s)
                if (!is_hex(c)) return false;
            return true;
        case Kind::Uuid:
            return is_uuid(s);
        case Kind::Pattern:
            return s.size() <= kMaxPatternSegment &&
                   std::regex_match(s.data(), s.data() + s.size(), *regex_);
    }
    return false;
}

size_t RouteConstraint::end_of(std::string_view p, size_t at) {
    if (p[at] == '<') {
        size_t close = p.find('>', at);
        if (close == std::string_view::npos) throw std::invalid_argument("unclosed '<'");
        return close + 1;
    }
    int depth = 0;
    bool in_class = false;  // inside "[...]", where parentheses are plain characters
    for (size_t i = at; i < p.size(); ++i) {
        const char c = p[i];
        if (c == '\\') {
            ++i;  // the escaped byte is never a bracket
            continue;
        }
        if (in_class) {
            in_class = c != ']';
        } else if (c == '[') {
            in_class = true;
        } else if (c == '(') {
            ++depth;
        } else if (c == ')' && --depth == 0) {
            return i + 1;
        }
    }
    throw std::invalid_argument("unbalanced parentheses in the expression");
}

}  // namespace rivet::app
