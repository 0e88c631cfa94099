// Accept-Encoding (RFC 9110 §12.5.3): the codings a request lists and their q-values, and the
// choice of one among those the server has.
#pragma once

#include <cstdint>
#include <span>
#include <string_view>

#include <rivet/compression.hpp>

namespace rivet::app {

// One element of the list: a coding name as sent ("gzip", "*", "identity") and its weight in
// thousandths (q=0.5 -> 500; 1000 when no q is given).
struct AcceptedCoding {
    std::string_view name;
    int q = 1000;
};

// Takes the next non-empty element off `list` (a field value); false when none is left.
// Malformed q-values count as 1 unless they are all zeros: only an explicit zero refuses.
bool next_accepted_coding(std::string_view& list, AcceptedCoding& out);

// What a response may be encoded with.
struct CodingChoice {
    enum class Kind : uint8_t {
        Identity,  // send the body as it is
        Coded,     // send it encoded with `coding`
    };
    Kind kind = Kind::Identity;
    ContentCoding coding = ContentCoding::Gzip;
};

// The coding for a request whose Accept-Encoding is `accept_encoding` ("" when absent: no
// coding, as curl without --compressed expects, although RFC 9110 would allow any). Among the
// `offered` codings that are acceptable (listed, or covered by "*", with q > 0; "x-gzip" is
// gzip), the highest q wins, ties going to the earlier in `offered`. Identity wins only when
// the request names it with a q above every offered coding's; a request refusing identity too
// ("identity;q=0") and nothing else acceptable still gets identity (RFC 9110 allows it, and an
// answer beats a 415 to a client this confused).
CodingChoice choose_coding(std::string_view accept_encoding,
                           std::span<const ContentCoding> offered);

}  // namespace rivet::app
