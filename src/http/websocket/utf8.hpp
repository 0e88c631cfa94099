// Incremental UTF-8 validation (RFC 3629): a text message is checked as its fragments arrive, so
// an invalid one is refused at the first bad byte (Autobahn's "fail fast" cases), and a code
// point split across two fragments is still valid.
#pragma once

#include <cstdint>
#include <string_view>

namespace rivet::http::ws {

class Utf8Validator {
public:
    // False at the first byte that no valid UTF-8 text can contain (overlongs, surrogates,
    // code points past U+10FFFF included); the validator then stays failed.
    bool feed(std::string_view bytes);
    // Everything fed so far is whole UTF-8 text (no code point cut at the end).
    bool complete() const { return state_ == 0; }
    void reset() { state_ = 0; }

private:
    uint32_t state_ = 0;
};

bool valid_utf8(std::string_view text);

}  // namespace rivet::http::ws
