// HTTP-date (RFC 9110 §5.6.7) parsing, for If-Modified-Since, If-Unmodified-Since, If-Range.
#pragma once

#include <cstdint>
#include <optional>
#include <string_view>

namespace rivet::files {

// Seconds since the epoch for an IMF-fixdate ("Sun, 06 Nov 1994 08:49:37 GMT") or one of the
// obsolete forms a recipient must still accept: RFC 850 ("Sunday, 06-Nov-94 08:49:37 GMT") and
// asctime ("Sun Nov  6 08:49:37 1994"). nullopt for anything else.
std::optional<int64_t> parse_http_date(std::string_view text);

}  // namespace rivet::files
