// The field lines of an HTTP/1 head (RFC 9112 §5), from the first field line through the empty
// line that ends them. One scanner for the request and the response parser: they differ only in
// what a field means to them (on_field) and in how they answer a refusal (status, wording).
#pragma once

#include <cstddef>
#include <cstdint>
#include <string_view>

#include "http/byte_scan.hpp"

namespace rivet::http {

enum class FieldBlockEnd : uint8_t {
    Complete,    // the empty line was read; `next` is the offset after it
    OutOfInput,  // `stop` came first: more input may complete it, or the caller's cap is crossed
    TooMany,     // a field line beyond max_fields
    Malformed,   // `why` says what
};

struct FieldBlock {
    FieldBlockEnd end = FieldBlockEnd::OutOfInput;
    size_t next = 0;            // Complete: where the body (or the next message) starts
    size_t count = 0;           // field lines read
    const char* why = nullptr;  // Malformed
};

// Scans s[i, stop). `on_field(index, name, value)` gets each field as views into `s`, the value
// without surrounding whitespace; a non-null return refuses the block as Malformed with it as the
// reason. Inline so that the request parser's hot path keeps its callback inlined.
template <class OnField>
inline FieldBlock scan_field_block(const unsigned char* s, size_t i, size_t stop, size_t max_fields,
                                   OnField&& on_field) {
    using byte_scan::is_ows;
    const auto text = [s](size_t from, size_t to) {
        return std::string_view(reinterpret_cast<const char*>(s) + from, to - from);
    };
    size_t count = 0;
    const auto out_of_input = [&] { return FieldBlock{FieldBlockEnd::OutOfInput, 0, count}; };
    const auto malformed = [&](const char* why) {
        return FieldBlock{FieldBlockEnd::Malformed, 0, count, why};
    };
    for (;;) {
        if (i == stop) return out_of_input();
        if (s[i] == '\r') {
            if (i + 1 == stop) return out_of_input();
            if (s[i + 1] != '\n') return malformed("bare CR");
            return {FieldBlockEnd::Complete, i + 2, count};
        }
        // A line starting with whitespace is obs-fold, or hides a field from other parsers.
        if (is_ows(s[i])) return malformed("obsolete line folding");
        if (count == max_fields) return {FieldBlockEnd::TooMany, 0, count};
        const size_t n0 = i;
        i = byte_scan::scan_token(s, i, stop);
        if (i == stop) return out_of_input();
        if (s[i] != ':' || i == n0) {
            return malformed(i == n0        ? "empty field name"
                             : is_ows(s[i]) ? "whitespace before colon"
                                            : "invalid field name");
        }
        const size_t n1 = i++;
        while (i < stop && is_ows(s[i])) ++i;
        const size_t v0 = i;
        i = byte_scan::scan_value(s, i, stop);
        if (i == stop) return out_of_input();
        if (s[i] != '\r') return malformed("invalid character in field value");
        size_t v1 = i;
        while (v1 > v0 && is_ows(s[v1 - 1])) --v1;
        if (i + 1 == stop) return out_of_input();
        if (s[i + 1] != '\n') return malformed("bare CR");
        i += 2;
        if (const char* why = on_field(count, text(n0, n1), text(v0, v1))) return malformed(why);
        ++count;
    }
}

}  // namespace rivet::http
