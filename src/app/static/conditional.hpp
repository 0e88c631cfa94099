// Conditional requests (RFC 9110 §13) against a file's validators.
#pragma once

#include <cstdint>
#include <string_view>

namespace rivet::files {

// The request fields that make a request conditional ("" when absent).
struct Conditions {
    std::string_view if_match;
    std::string_view if_none_match;
    std::string_view if_modified_since;
    std::string_view if_unmodified_since;
    std::string_view if_range;
};

// A representation's validators: a strong entity tag ("\"...\"") and its mtime in seconds.
struct Validators {
    std::string_view etag;
    int64_t last_modified = 0;
};

enum class Precondition : uint8_t { Proceed, NotModified, Failed };

// RFC 9110 §13.2.2, in its order: If-Match (strong comparison), else If-Unmodified-Since, can
// fail the request (412); then If-None-Match (weak comparison; GET and HEAD get 304, other
// methods 412), else If-Modified-Since (GET and HEAD only) can make it 304. Unparsable dates
// are ignored, and so is an If-Modified-Since later than `now` (seconds since the epoch).
Precondition evaluate(const Conditions& c, const Validators& v, bool get_or_head, int64_t now);

// If-Range (§13.1.5): true when the Range field may be honoured: no If-Range, an entity tag
// that matches strongly, or a date equal to Last-Modified.
bool if_range_holds(std::string_view if_range, const Validators& v);

// Whether an If-Match / If-None-Match list ("*" or 1#entity-tag) holds `etag`.
bool etag_list_matches(std::string_view list, std::string_view etag, bool weak_comparison);

}  // namespace rivet::files
