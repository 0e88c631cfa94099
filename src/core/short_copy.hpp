// copy_short: memcpy for the short pieces a response head is made of (names, values, status
// lines), mostly under 64 bytes, where a call to memcpy costs more than the copy.
#pragma once

#include <cstddef>
#include <cstring>

namespace rivet::core {

// Copies n bytes (d and s do not overlap) with loads and stores of the widest size that fits,
// the last one overlapping the one before. Touches only [s, s + n) and [d, d + n).
[[gnu::always_inline]] inline void copy_short(char* d, const char* s, size_t n) {
    if (n > 64) {
        std::memcpy(d, s, n);
    } else if (n > 32) {
        std::memcpy(d, s, 32);
        std::memcpy(d + n - 32, s + n - 32, 32);
    } else if (n >= 16) {
        std::memcpy(d, s, 16);
        std::memcpy(d + n - 16, s + n - 16, 16);
    } else if (n >= 8) {
        std::memcpy(d, s, 8);
        std::memcpy(d + n - 8, s + n - 8, 8);
    } else if (n >= 4) {
        std::memcpy(d, s, 4);
        std::memcpy(d + n - 4, s + n - 4, 4);
    } else if (n > 0) {
        d[0] = s[0];
        d[n / 2] = s[n / 2];
        d[n - 1] = s[n - 1];
    }
}

}  // namespace rivet::core
