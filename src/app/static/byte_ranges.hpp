// Range requests (RFC 9110 §14): parsing "Range: bytes=..." against a representation's size.
#pragma once

#include <cstdint>
#include <string_view>
#include <vector>

namespace rivet::files {

struct ByteRange {
    uint64_t first = 0;
    uint64_t last = 0;  // inclusive, < size
    uint64_t length() const { return last - first + 1; }
};

struct RangeRequest {
    enum class Kind : uint8_t {
        Whole,          // no usable Range: send the whole representation (200)
        Partial,        // 206 with `ranges` (one, or several for multipart/byteranges)
        Unsatisfiable,  // 416 with "Content-Range: bytes */size"
    } kind = Kind::Whole;
    std::vector<ByteRange> ranges;
};

// `header` is the Range field's value. Ignored (Whole), as RFC 9110 allows: a unit other than
// bytes, a syntax error (including first > last), or more than `max_ranges` ranges after
// merging. Ranges that overlap or lie closer than a part header's size are merged (sorted
// then); otherwise their order is kept. Ranges past the end are dropped; none left is a 416.
// So a response never carries more than `size` bytes of the file.
RangeRequest parse_ranges(std::string_view header, uint64_t size, unsigned max_ranges);

}  // namespace rivet::files
