// Field names and tokens: the case-insensitive comparison every lookup of a field makes
// (find_header, Response::header, the compressor's checks), and the tchar test. The parser's own
// scans are in byte_scan.hpp; iequals's inline part is in request_parser.hpp.
#include <cstring>

#include "http/byte_scan.hpp"
#include "http/request_parser.hpp"

namespace rivet::http {

using namespace byte_scan;  // the byte classes, lower(), kOnes and kHighs

namespace {

// x with its ASCII capitals ('A'..'Z') made small, every byte at once; other bytes (obs-text
// included) unchanged. In each byte's low seven bits, adding 0x80 - 'A' sets the top bit iff
// the byte is >= 'A', adding 0x7F - 'Z' iff it is > 'Z'; neither sum carries into the next byte.
template <class Word>
Word fold_case(Word x) {
    constexpr Word ones = Word(kOnes), highs = Word(kHighs);
    const Word low7 = x & ~highs;
    const Word upper = (low7 + ones * (0x80 - 'A')) & ~(low7 + ones * (0x7F - 'Z')) & ~x & highs;
    return x | (upper >> 2);
}

template <class Word>
bool same_folded(const char* a, const char* b) {
    Word x, y;
    std::memcpy(&x, a, sizeof x);
    std::memcpy(&y, b, sizeof y);
    return x == y || fold_case(x) == fold_case(y);
}

}  // namespace

// a and b of the same size: eight bytes a step, the last step overlapping the one before, bytes
// one by one only below four. The first byte is compared again: iequals's inline test lets
// through pairs that differ in bit 0x20 but are not letters ('@' and '`').
bool iequals_same_size(std::string_view a, std::string_view b) {
    const size_t n = a.size();
    const char* x = a.data();
    const char* y = b.data();
    if (n >= 8) {
        for (size_t i = 0; i + 8 < n; i += 8)
            if (!same_folded<uint64_t>(x + i, y + i)) return false;
        return same_folded<uint64_t>(x + n - 8, y + n - 8);
    }
    if (n >= 4) return same_folded<uint32_t>(x, y) && same_folded<uint32_t>(x + n - 4, y + n - 4);
    for (size_t i = 0; i < n; ++i)
        if (lower(static_cast<unsigned char>(x[i])) != lower(static_cast<unsigned char>(y[i])))
            return false;
    return true;
}

bool is_token_char(unsigned char c) {
    return is(c, kToken);
}

bool is_token(std::string_view s) {
    const auto* p = reinterpret_cast<const unsigned char*>(s.data());
    return !s.empty() && scan_token(p, 0, s.size()) == s.size();
}

std::string_view find_header(std::span<const Header> headers, std::string_view name) {
    for (const Header& h : headers)
        if (iequals(h.name, name)) return h.value;
    return {};
}

}  // namespace rivet::http
