// Accept-Encoding (RFC 9110 §12.5.3): may a precompressed variant be sent?
#pragma once

#include <string_view>

namespace rivet::files {

// Whether `coding` ("gzip", "br") is acceptable: listed, or covered by "*", with a q-value
// above 0 ("gzip;q=0" refuses it, and so does "*;q=0" unless the coding is listed itself).
bool accepts_coding(std::string_view accept_encoding, std::string_view coding);

}  // namespace rivet::files
