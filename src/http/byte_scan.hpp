// The request parser's byte-level tools: one table of byte classes (RFC 9110's tchar,
// field-vchar, request-target and host characters) and scanners that skip runs of allowed bytes
// in blocks (SSE2 16 at a time, SWAR 8 elsewhere). Private to http/; request_parser.cpp uses them.
#pragma once

#include <array>
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <string_view>
#if defined(__SSE2__) && !defined(RIVET_NO_SIMD)
#include <emmintrin.h>
#endif

namespace rivet::http::byte_scan {

// Byte classes, in one table so that each scan loop costs one load and one test per byte.
enum : uint8_t {
    kToken = 1,   // tchar (RFC 9110 §5.6.2): methods, field names, transfer codings
    kValue = 2,   // field-vchar, obs-text, SP, HTAB (RFC 9110 §5.5)
    kTarget = 4,  // visible ASCII; request-targets carry no SP, CTL, DEL or raw non-ASCII
    kHost = 8,    // reg-name, IP-literal and port characters (RFC 3986 §3.2.2), no userinfo '@'
    kPath = 16,   // kTarget but '?' and '#': what an origin-form target's path is made of
};

constexpr std::array<uint8_t, 256> make_classes() {
    constexpr std::string_view token_punct = "!#$%&'*+-.^_`|~";
    constexpr std::string_view host_punct = "-._~%!$&'()*+,;=:[]";
    std::array<uint8_t, 256> t{};
    for (int c = 1; c < 256; ++c) {
        const bool alnum =
            (c >= '0' && c <= '9') || (c >= 'A' && c <= 'Z') || (c >= 'a' && c <= 'z');
        const char ch = static_cast<char>(c);
        uint8_t v = 0;
        if (alnum || token_punct.find(ch) != std::string_view::npos) v |= kToken;
        if (c == '\t' || (c >= 0x20 && c != 0x7f)) v |= kValue;
        if (c > 0x20 && c < 0x7f) v |= kTarget;
        if (c > 0x20 && c < 0x7f && c != '?' && c != '#') v |= kPath;
        if (alnum || host_punct.find(ch) != std::string_view::npos) v |= kHost;
        t[c] = v;
    }
    return t;
}
inline constexpr std::array<uint8_t, 256> kClass = make_classes();

inline bool is(unsigned char c, uint8_t cls) {
    return (kClass[c] & cls) != 0;
}
inline bool is_ows(unsigned char c) {
    return c == ' ' || c == '\t';
}
inline unsigned char lower(unsigned char c) {
    return (c >= 'A' && c <= 'Z') ? c | 0x20 : c;
}

// Eight bytes at a time for the long runs (targets, field values): the common case has no byte
// that needs a closer look, so the byte loop only runs near the end of the run.
inline constexpr uint64_t kOnes = 0x0101010101010101ull;
inline constexpr uint64_t kHighs = 0x8080808080808080ull;
inline uint64_t load8(const unsigned char* p) {
    uint64_t v;
    std::memcpy(&v, p, 8);
    return v;
}
// Nonzero iff some byte of v is below n (exact for n <= 128).
inline uint64_t has_below(uint64_t v, uint8_t n) {
    return (v - kOnes * n) & ~v & kHighs;
}
// Nonzero iff some byte of v is above n (exact for n <= 127).
inline uint64_t has_above(uint64_t v, uint8_t n) {
    return ((v + kOnes * (127 - n)) | v) & kHighs;
}
inline uint32_t load4(const char* p) {
    uint32_t v;
    std::memcpy(&v, p, 4);
    return v;
}

// Where the run of bytes of class `cls` from i ends (stop at most): four bytes a step, for the
// short runs (methods, field names, hosts) that block scanners gain nothing on.
template <uint8_t cls>
inline size_t scan_class(const unsigned char* s, size_t i, size_t stop) {
    while (stop - i >= 4 &&
           (kClass[s[i]] & kClass[s[i + 1]] & kClass[s[i + 2]] & kClass[s[i + 3]] & cls))
        i += 4;
    while (i < stop && is(s[i], cls)) ++i;
    return i;
}
inline size_t scan_token(const unsigned char* s, size_t i, size_t stop) {
    return scan_class<kToken>(s, i, stop);
}

// Skips whole blocks of bytes in [lo, hi] (or, with high_ok, also >= 0x80), less the bytes
// `but1` and `but2` where nonzero, and returns the first byte outside them, or where fewer than a
// block remain. SSE2 (every x86-64) takes 16 bytes a step; elsewhere SWAR takes 8 and leaves a
// flagged block to the caller's byte loop.
template <unsigned char lo, unsigned char hi, bool high_ok, unsigned char but1 = 0,
          unsigned char but2 = 0>
inline size_t skip_blocks(const unsigned char* s, size_t i, size_t stop) {
#if defined(__SSE2__) && !defined(RIVET_NO_SIMD)
    const __m128i below = _mm_set1_epi8(static_cast<char>(lo - 1));
    const __m128i above = _mm_set1_epi8(static_cast<char>(hi + 1));
    for (; stop - i >= 16; i += 16) {
        const __m128i x = _mm_loadu_si128(reinterpret_cast<const __m128i*>(s + i));
        // Signed compares: bytes >= 0x80 are negative, below every bound here.
        __m128i ok = _mm_and_si128(_mm_cmpgt_epi8(x, below), _mm_cmplt_epi8(x, above));
        if (high_ok) ok = _mm_or_si128(ok, _mm_cmplt_epi8(x, _mm_setzero_si128()));
        if (but1) ok = _mm_andnot_si128(_mm_cmpeq_epi8(x, _mm_set1_epi8(char(but1))), ok);
        if (but2) ok = _mm_andnot_si128(_mm_cmpeq_epi8(x, _mm_set1_epi8(char(but2))), ok);
        const unsigned bad = ~static_cast<unsigned>(_mm_movemask_epi8(ok)) & 0xffff;
        if (bad) return i + static_cast<size_t>(__builtin_ctz(bad));
    }
#else
    for (; stop - i >= 8; i += 8) {
        const uint64_t v = load8(s + i);
        if (has_below(v, lo) | (high_ok ? has_below(v ^ (kOnes * (hi + 1)), 1) : has_above(v, hi)))
            break;
        if ((but1 && has_below(v ^ (kOnes * but1), 1)) ||
            (but2 && has_below(v ^ (kOnes * but2), 1)))
            break;
    }
#endif
    return i;
}

inline size_t scan_target(const unsigned char* s, size_t i, size_t stop) {
    i = skip_blocks<0x21, 0x7e, false>(s, i, stop);
    while (i < stop && is(s[i], kTarget)) ++i;
    return i;
}

// scan_target, and `path_end` is where its first '?' or '#' is (where it ends if it has none):
// for an origin-form target, the end of the path. One pass for both, no search after it.
inline size_t scan_target_path(const unsigned char* s, size_t i, size_t stop, size_t& path_end) {
    i = skip_blocks<0x21, 0x7e, false, '?', '#'>(s, i, stop);
    while (i < stop && is(s[i], kPath)) ++i;
    path_end = i;
    return i < stop && (s[i] == '?' || s[i] == '#') ? scan_target(s, i + 1, stop) : i;
}

inline size_t scan_value(const unsigned char* s, size_t i, size_t stop) {
    for (;;) {
        // Plain text (SP to '~', obs-text) in blocks; the block scan stops at CR (the usual end),
        // HTAB (allowed, rare: step over it and go on in blocks) and bad bytes alike.
        i = skip_blocks<0x20, 0x7e, true>(s, i, stop);
        if (i < stop && s[i] == '\t') {
            ++i;
            continue;
        }
        while (i < stop && is(s[i], kValue)) ++i;
        return i;
    }
}

// a == b ignoring case, where a is validated field text (no CTL but HTAB) and b a literal made
// of lowercase letters, digits, '-' and '.': bytes that all have bit 0x20 set, so setting that
// bit in a's bytes folds case without ever making a match out of a byte that a may not hold.
inline bool lit_iequals(std::string_view a, std::string_view b) {
    if (a.size() != b.size()) return false;
    const auto* x = reinterpret_cast<const unsigned char*>(a.data());
    const auto* y = reinterpret_cast<const unsigned char*>(b.data());
    size_t i = 0;
    for (; a.size() - i >= 8; i += 8)
        if ((load8(x + i) | kOnes * 0x20) != load8(y + i)) return false;
    if (a.size() - i >= 4) {  // "host", "expect": one step
        uint32_t p, q;
        std::memcpy(&p, x + i, 4);
        std::memcpy(&q, y + i, 4);
        if ((p | 0x20202020u) != q) return false;
        i += 4;
    }
    for (; i < a.size(); ++i)
        if ((x[i] | 0x20) != y[i]) return false;
    return true;
}

inline std::string_view trim_ows(std::string_view v) {
    while (!v.empty() && is_ows(v.front())) v.remove_prefix(1);
    while (!v.empty() && is_ows(v.back())) v.remove_suffix(1);
    return v;
}

}  // namespace rivet::http::byte_scan
