// How deep a JSON document nests, found without parsing it: a parser builds a structure (and
// recurses) per level, so a hostile document ("[" x 100,000) must be refused before it starts.
// Shared by the configuration reader and Request::json().
#pragma once

#include <cstddef>
#include <string_view>

namespace rivet::core {

// The offset of the bracket that opens the (max_depth + 1)-th nested container, or npos when
// no container is nested deeper than max_depth. Brackets inside strings do not count. A linear
// scan with no allocation. On a valid document it counts exactly what a parser would; on an
// invalid one a parser stops at the first error, no deeper than this scan has seen by then.
inline size_t json_too_deep_at(std::string_view text, size_t max_depth) {
    size_t depth = 0;
    bool in_string = false;
    for (size_t i = 0; i < text.size(); ++i) {
        const char c = text[i];
        if (in_string) {
            if (c == '\\')
                ++i;  // the escaped character, whatever it is
            else if (c == '"')
                in_string = false;
            continue;
        }
        if (c == '"') {
            in_string = true;
        } else if (c == '[' || c == '{') {
            if (++depth > max_depth) return i;
        } else if ((c == ']' || c == '}') && depth > 0) {
            --depth;  // unbalanced closers are the parser's to report
        }
    }
    return std::string_view::npos;
}

}  // namespace rivet::core
