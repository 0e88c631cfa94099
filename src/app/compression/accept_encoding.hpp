// Accept-Encoding (RFC 9110 §12.5.3): the one negotiation of a content coding, used by the
// compressor (rivet::compression) and by the precompressed static files alike, so that both give
// one client the same coding for the same field.
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

// Takes the next valid element off `list` (a field value); false when none is left. Skipped,
// as if not sent: empty elements, a name that is not a token, and an element whose q is not a
// qvalue ("0" to "1" with at most 3 decimals: "q=2", "q=0.0001", "q=abc", "q=", a second q).
// Other parameters, which the grammar does not have, are ignored.
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
// `offered` codings (in the server's order of preference) the acceptable ones are those listed,
// or covered by "*", with q > 0; names are case-insensitive and "x-gzip" is gzip. A coding
// listed twice counts as its first valid element says. The highest q wins, ties going to the
// earlier in `offered`. Identity's q is its own element's, else "*"'s: it wins only with a q
// above the best coding's (implicitly acceptable, it never beats a listed coding). A request
// refusing identity too ("identity;q=0", "*;q=0") with nothing else acceptable still gets
// identity (RFC 9110 allows it, and an answer beats a 415 to a client this confused).
CodingChoice choose_coding(std::string_view accept_encoding,
                           std::span<const ContentCoding> offered);

}  // namespace rivet::app
