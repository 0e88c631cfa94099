#include "app/compression/accept_encoding.hpp"

#include <rivet/compression.hpp>

#include "http/byte_scan.hpp"
#include "http/request_parser.hpp"

namespace rivet::app {

namespace {

constexpr int kMalformed = -1;
constexpr int kNotListed = -1;

// qvalue = ( "0" [ "." 0*3DIGIT ] ) / ( "1" [ "." 0*3("0") ] ), in thousandths; kMalformed for
// anything else.
int parse_q(std::string_view v) {
    if (v.empty() || v.size() > 5 || (v.size() > 1 && v[1] != '.')) return kMalformed;
    if (v[0] != '0' && v[0] != '1') return kMalformed;
    int q = v[0] == '1' ? 1000 : 0, scale = 100;
    for (char c : v.substr(v.size() > 1 ? 2 : 1)) {
        if (c < '0' || c > '9' || (v[0] == '1' && c != '0')) return kMalformed;
        q += (c - '0') * scale;
        scale /= 10;
    }
    return q;
}

// The weight of an element's parameters (after its first ';'), or kMalformed.
int weight_of(std::string_view params) {
    int q = 1000;
    bool seen = false;
    while (!params.empty()) {
        size_t semi = params.find(';');
        std::string_view p = http::byte_scan::trim_ows(params.substr(0, semi));
        params = semi == std::string_view::npos ? std::string_view{} : params.substr(semi + 1);
        size_t eq = p.find('=');
        if (!http::iequals(http::byte_scan::trim_ows(p.substr(0, eq)), "q")) continue;
        if (seen || eq == std::string_view::npos) return kMalformed;  // "q;q=1", "gzip;q"
        seen = true;
        q = parse_q(http::byte_scan::trim_ows(p.substr(eq + 1)));
        if (q == kMalformed) return kMalformed;
    }
    return q;
}

// The coding a listed name stands for; false for names the server has no coding of.
bool coding_named(std::string_view name, ContentCoding& out) {
    if (http::iequals(name, "gzip") || http::iequals(name, "x-gzip")) {
        out = ContentCoding::Gzip;
    } else if (http::iequals(name, "br")) {
        out = ContentCoding::Brotli;
    } else if (http::iequals(name, "zstd")) {
        out = ContentCoding::Zstd;
    } else {
        return false;
    }
    return true;
}

}  // namespace

bool next_accepted_coding(std::string_view& list, AcceptedCoding& out) {
    while (!list.empty()) {
        size_t comma = list.find(',');
        std::string_view item = list.substr(0, comma);
        list = comma == std::string_view::npos ? std::string_view{} : list.substr(comma + 1);
        size_t semi = item.find(';');
        std::string_view name = http::byte_scan::trim_ows(item.substr(0, semi));
        // "gzip, , br": empty elements are allowed and ignored; invalid ones are ignored too.
        if (name.empty() || (name != "*" && !http::is_token(name))) continue;
        int q = semi == std::string_view::npos ? 1000 : weight_of(item.substr(semi + 1));
        if (q == kMalformed) continue;
        out.name = name;
        out.q = q;
        return true;
    }
    return false;
}

CodingChoice choose_coding(std::string_view accept_encoding,
                           std::span<const ContentCoding> offered) {
    // No field (most non-browser clients): identity, as below, without the tables.
    if (accept_encoding.empty()) return {};
    // The q each offered coding was first given by name (kNotListed otherwise), "*"'s, identity's.
    constexpr size_t kMaxOffered = 8;
    int named[kMaxOffered];
    const size_t n = offered.size() < kMaxOffered ? offered.size() : kMaxOffered;
    for (size_t i = 0; i < n; ++i) named[i] = kNotListed;
    int star = kNotListed, identity = kNotListed;
    AcceptedCoding c;
    while (n > 0 && next_accepted_coding(accept_encoding, c)) {
        ContentCoding coding;
        if (c.name == "*") {
            if (star == kNotListed) star = c.q;
        } else if (http::iequals(c.name, "identity")) {
            if (identity == kNotListed) identity = c.q;
        } else if (coding_named(c.name, coding)) {
            for (size_t i = 0; i < n; ++i)
                if (offered[i] == coding && named[i] == kNotListed) named[i] = c.q;
        }
    }
    CodingChoice best;
    int best_q = 0;
    for (size_t i = 0; i < n; ++i) {
        int q = named[i] != kNotListed ? named[i] : star;
        if (q > best_q) {  // strictly: the earlier of equal ones stays
            best_q = q;
            best = {CodingChoice::Kind::Coded, offered[i]};
        }
    }
    // "*" covers identity when it is not named (RFC 9110 §12.5.3).
    int identity_q = identity != kNotListed ? identity : star;
    if (best.kind == CodingChoice::Kind::Coded && identity_q > best_q) return {};
    return best;
}

}  // namespace rivet::app
