// Text from a request, cut to a length fit for a log line or an error message: a client decides
// how long a number, a path or a token is, and a copy of it must not cost what it sent.
#pragma once

#include <cstddef>
#include <string>
#include <string_view>

namespace rivet::core {

// `text` whole when it has at most `max` bytes; else its first bytes (never half a UTF-8
// sequence) and how many were left out: "12345... (995 more bytes)".
inline std::string bounded_text(std::string_view text, size_t max) {
    if (text.size() <= max) return std::string(text);
    auto continues = [&](size_t i) { return (static_cast<unsigned char>(text[i]) & 0xC0) == 0x80; };
    // A UTF-8 sequence has at most 3 continuation bytes (10xxxxxx): back up over those the cut
    // falls on, to the start of their sequence.
    size_t cut = max;
    for (size_t back = 0; back < 3 && cut > 0 && continues(cut); ++back) --cut;
    std::string out(text.substr(0, cut));
    out += "... (" + std::to_string(text.size() - cut) + " more bytes)";
    return out;
}

}  // namespace rivet::core
