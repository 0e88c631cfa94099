// UTF-8 validation as a DFA over byte classes (RFC 3629 §4's table): each state says what the
// next byte may be, so overlongs (E0 80..9F, F0 80..8F), surrogates (ED A0..BF) and code points
// past U+10FFFF (F4 90.., F5..FF) fail at the byte that makes them so.
#include "http/websocket/utf8.hpp"

#include <array>
#include <cstring>

namespace rivet::http::ws {

namespace {

enum Class : uint8_t {
    kAscii,    // 00..7F
    kCont8x,   // 80..8F
    kCont9x,   // 90..9F
    kContAB,   // A0..BF
    kInvalid,  // C0, C1, F5..FF
    kLead2,    // C2..DF
    kLeadE0,   // E0: the next byte A0..BF (no overlong)
    kLead3,    // E1..EC, EE, EF
    kLeadED,   // ED: the next byte 80..9F (no surrogate)
    kLeadF0,   // F0: the next byte 90..BF (no overlong)
    kLead4,    // F1..F3
    kLeadF4,   // F4: the next byte 80..8F (not past U+10FFFF)
    kClasses
};

enum State : uint8_t {
    kAccept,  // between code points: must be 0 (complete() and the fast path test it)
    kFail,
    kNeed1,
    kNeed2,
    kNeed3,
    kAfterE0,
    kAfterED,
    kAfterF0,
    kAfterF4,
    kStates
};

constexpr std::array<uint8_t, 256> make_classes() {
    std::array<uint8_t, 256> c{};
    for (int b = 0; b < 256; ++b) {
        uint8_t k = kInvalid;
        if (b <= 0x7F)
            k = kAscii;
        else if (b <= 0x8F)
            k = kCont8x;
        else if (b <= 0x9F)
            k = kCont9x;
        else if (b <= 0xBF)
            k = kContAB;
        else if (b <= 0xC1)
            k = kInvalid;
        else if (b <= 0xDF)
            k = kLead2;
        else if (b == 0xE0)
            k = kLeadE0;
        else if (b == 0xED)
            k = kLeadED;
        else if (b <= 0xEF)
            k = kLead3;
        else if (b == 0xF0)
            k = kLeadF0;
        else if (b <= 0xF3)
            k = kLead4;
        else if (b == 0xF4)
            k = kLeadF4;
        c[b] = k;
    }
    return c;
}

constexpr std::array<std::array<uint8_t, kClasses>, kStates> make_transitions() {
    std::array<std::array<uint8_t, kClasses>, kStates> t{};
    for (auto& row : t) row.fill(kFail);
    t[kAccept][kAscii] = kAccept;
    t[kAccept][kLead2] = kNeed1;
    t[kAccept][kLeadE0] = kAfterE0;
    t[kAccept][kLead3] = kNeed2;
    t[kAccept][kLeadED] = kAfterED;
    t[kAccept][kLeadF0] = kAfterF0;
    t[kAccept][kLead4] = kNeed3;
    t[kAccept][kLeadF4] = kAfterF4;
    for (uint8_t cont : {kCont8x, kCont9x, kContAB}) {
        t[kNeed1][cont] = kAccept;
        t[kNeed2][cont] = kNeed1;
        t[kNeed3][cont] = kNeed2;
    }
    t[kAfterE0][kContAB] = kNeed1;
    t[kAfterED][kCont8x] = kNeed1;
    t[kAfterED][kCont9x] = kNeed1;
    t[kAfterF0][kCont9x] = kNeed2;
    t[kAfterF0][kContAB] = kNeed2;
    t[kAfterF4][kCont8x] = kNeed2;
    return t;
}

constexpr auto kClassOf = make_classes();
constexpr auto kNext = make_transitions();

}  // namespace

bool Utf8Validator::feed(std::string_view bytes) {
    uint32_t state = state_;
    const auto* p = reinterpret_cast<const uint8_t*>(bytes.data());
    const auto* end = p + bytes.size();
    while (p < end) {
        if (state == kAccept) {
            // ASCII runs 8 bytes at a time: no byte with its top bit set, no state to change.
            while (end - p >= 8) {
                uint64_t word;
                std::memcpy(&word, p, 8);
                if (word & 0x8080808080808080ull) break;
                p += 8;
            }
            if (p == end) break;
        }
        state = kNext[state][kClassOf[*p++]];
        if (state == kFail) break;
    }
    state_ = state;
    return state != kFail;
}

bool valid_utf8(std::string_view text) {
    Utf8Validator v;
    return v.feed(text) && v.complete();
}

}  // namespace rivet::http::ws
