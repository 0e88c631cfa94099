// The one Accept-Encoding negotiation (app/compression/accept_encoding.hpp), as a table: what
// the compressor (offering zstd, br, gzip) and the precompressed files (offering the variants
// that exist: br, gzip) choose for each field value, hostile ones included.
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "app/compression/accept_encoding.hpp"

namespace {

using rivet::ContentCoding;
using rivet::app::choose_coding;
using rivet::app::CodingChoice;

const std::vector<ContentCoding> kCompressor = {ContentCoding::Zstd, ContentCoding::Brotli,
                                                ContentCoding::Gzip};
const std::vector<ContentCoding> kFiles = {ContentCoding::Brotli, ContentCoding::Gzip};

std::string chosen(std::string_view accept, const std::vector<ContentCoding>& offered) {
    CodingChoice c = choose_coding(accept, offered);
    return c.kind == CodingChoice::Kind::Coded ? rivet::content_coding_name(c.coding) : "identity";
}

struct Row {
    const char* accept;
    const char* compressor;  // among zstd, br, gzip
    const char* files;       // among br, gzip
};

const Row kTable[] = {
    // No field, nothing usable, nothing offered.
    {"", "identity", "identity"},
    {" , ", "identity", "identity"},
    {"deflate, compress", "identity", "identity"},
    // Equal q: the server's order.
    {"gzip", "gzip", "gzip"},
    {"br", "br", "br"},
    {"gzip, deflate, br, zstd", "zstd", "br"},
    {"gzip, deflate, br", "br", "br"},
    {"zstd;q=0.5, gzip;q=0.5", "zstd", "gzip"},
    // The highest q wins; OWS, empty elements, "Q=".
    {"gzip;q=1, br;q=0.9, zstd;q=0.8", "gzip", "gzip"},
    {" gzip ; q=0.8 , , br ; Q=0.9", "br", "br"},
    {"gzip;q=0.001", "gzip", "gzip"},
    {"zstd;q=0.001, gzip;q=0.002", "gzip", "gzip"},
    {"br;q=0.5, gzip", "gzip", "gzip"},
    {"gzip;q=1.000, br;q=0.999", "gzip", "gzip"},
    {"gzip;q=0.5, br;q=1.", "br", "br"},
    // q=0 refuses.
    {"gzip;q=0", "identity", "identity"},
    {"gzip;q=0.000, br", "br", "br"},
    {"zstd;q=0, br;q=0., gzip", "gzip", "gzip"},
    // Invalid q-values: the element is ignored, as if not sent (not a refusal, not q=1).
    {"gzip;q=abc", "identity", "identity"},
    {"gzip;q=", "identity", "identity"},
    {"gzip;q", "identity", "identity"},
    {"gzip;q=2", "identity", "identity"},
    {"gzip;q=1.5", "identity", "identity"},
    {"gzip;q=1.001", "identity", "identity"},
    {"gzip;q=0.0001", "identity", "identity"},
    {"gzip;q=-0", "identity", "identity"},
    {"gzip;q=.5", "identity", "identity"},
    {"gzip;q=0.5.5", "identity", "identity"},
    {"gzip;q=0.5;q=1", "identity", "identity"},  // two weights
    {"br;q=5, gzip;q=0.1", "gzip", "gzip"},
    {"gzip;q=0x1, br;q=0.2", "br", "br"},
    {"*;q=abc, gzip;q=0.3", "gzip", "gzip"},  // the invalid "*" is not there
    // Other parameters are not in the grammar: ignored, the element kept.
    {"gzip;level=9", "gzip", "gzip"},
    {"gzip;level=9;q=0", "identity", "identity"},
    // Names that are not tokens are ignored.
    {"g zip, br;q=0.1", "br", "br"},
    {"\"gzip\", br;q=0.1", "br", "br"},
    {"gzip\x7f, br;q=0.1", "br", "br"},
    // Duplicates: the first valid element of a coding counts.
    {"gzip;q=1, gzip;q=0", "gzip", "gzip"},
    {"gzip;q=0, gzip", "identity", "identity"},
    {"gzip;q=0.2, br;q=0.5, gzip;q=1", "br", "br"},
    {"gzip;q=bad, gzip;q=0.4, br;q=0.3", "gzip", "gzip"},  // the invalid first is not there
    {"x-gzip;q=0, gzip", "identity", "identity"},          // the same coding by two names
    {"br;q=0.9, BR;q=0.1, gzip;q=0.5", "br", "br"},
    {"*;q=0.1, *, gzip;q=0.05", "zstd", "br"},
    {"identity;q=0.9, identity;q=0.1, gzip;q=0.5", "identity", "identity"},
    // Case-insensitive names; x-gzip is gzip.
    {"GZIP", "gzip", "gzip"},
    {"Br", "br", "br"},
    {"ZsTd", "zstd", "identity"},
    {"x-gzip", "gzip", "gzip"},
    {"X-GZIP;q=0.7, br;q=0.6", "gzip", "gzip"},
    // "*" covers what is not named, identity included.
    {"*", "zstd", "br"},
    {"*;q=0", "identity", "identity"},
    {"*, zstd;q=0", "br", "br"},
    {"*, br;q=0", "zstd", "gzip"},
    {"*;q=0, gzip", "gzip", "gzip"},
    {"*;q=0.2, gzip;q=0.1", "zstd", "br"},
    {"*;q=0.5, br;q=0.1, gzip;q=0.1", "zstd", "identity"},  // identity 0.5 (from "*") wins
    // Identity: wins only with a q above the best coding's.
    {"identity", "identity", "identity"},
    {"gzip;q=0.5, identity", "identity", "identity"},
    {"gzip, identity;q=0.5", "gzip", "gzip"},
    {"gzip, identity", "gzip", "gzip"},
    {"IDENTITY;q=1, br;q=0.999", "identity", "identity"},
    // Identity refused with nothing else acceptable: identity anyway (no 415).
    {"identity;q=0, deflate", "identity", "identity"},
    {"*;q=0, identity;q=0", "identity", "identity"},
    {"identity;q=0, gzip", "gzip", "gzip"},
};

TEST(AcceptEncodingNegotiation, TheTable) {
    for (const Row& row : kTable) {
        EXPECT_EQ(chosen(row.accept, kCompressor), row.compressor) << '"' << row.accept << '"';
        EXPECT_EQ(chosen(row.accept, kFiles), row.files) << '"' << row.accept << '"';
    }
}

TEST(AcceptEncodingNegotiation, NothingOfferedIsIdentity) {
    EXPECT_EQ(chosen("gzip, br, zstd, *", {}), "identity");
}

TEST(AcceptEncodingNegotiation, ManyElementsAndLongValues) {
    std::string many;
    for (int i = 0; i < 1000; ++i) many += "gzip;q=0.5, ";
    many += "br";
    EXPECT_EQ(chosen(many, kCompressor), "br");  // br 1 beats gzip's first 0.5
    EXPECT_EQ(chosen(std::string(8000, 'x'), kCompressor), "identity");
    EXPECT_EQ(chosen(std::string(8000, ';'), kCompressor), "identity");
    EXPECT_EQ(chosen(std::string(8000, ','), kCompressor), "identity");
}

}  // namespace
