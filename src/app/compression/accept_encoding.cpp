#include "app/compression/accept_encoding.hpp"

#include <rivet/compression.hpp>

#include "http/byte_scan.hpp"
#include "http/request_parser.hpp"

namespace rivet::app {

namespace {

// qvalue = ( "0" [ "." 0*3DIGIT ] ) / ( "1" [ "." 0*3("0") ] ), in thousandths.
int parse_q(std::string_view v) {
    bool all_zero = !v.empty();
    for (char c : v)
        if (c != '0' && c != '.') all_zero = false;
    if (all_zero) return 0;
    if (v.size() < 1 || v.size() > 5 || v[0] != '0' || (v.size() > 1 && v[1] != '.'))
        return 1000;  // "1", "1.0", and anything malformed
    int q = 0, scale = 100;
    for (char c : v.substr(2)) {
        if (c < '0' || c > '9') return 1000;
        q += (c - '0') * scale;
        scale /= 10;
    }
    return q;
}

int weight_of(std::string_view params) {
    while (!params.empty()) {
        size_t semi = params.find(';');
        std::string_view p = http::byte_scan::trim_ows(params.substr(0, semi));
        params = semi == std::string_view::npos ? std::string_view{} : params.substr(semi + 1);
        if (p.size() >= 2 && (p[0] | 0x20) == 'q' && p[1] == '=')
            return parse_q(http::byte_scan::trim_ows(p.substr(2)));
    }
    return 1000;
}

}  // namespace

bool next_accepted_coding(std::string_view& list, AcceptedCoding& out) {
    while (!list.empty()) {
        size_t comma = list.find(',');
        std::string_view item = list.substr(0, comma);
        list = comma == std::string_view::npos ? std::string_view{} : list.substr(comma + 1);
        size_t semi = item.find(';');
        std::string_view name = http::byte_scan::trim_ows(item.substr(0, semi));
        if (name.empty()) continue;  // "gzip, , br": empty elements are allowed and ignored
        out.name = name;
        out.q = semi == std::string_view::npos ? 1000 : weight_of(item.substr(semi + 1));
        return true;
    }
    return false;
}

CodingChoice choose_coding(std::string_view accept_encoding,
                           std::span<const ContentCoding> offered) {
    constexpr int kNotListed = -1;
    // The q each offered coding was given by name (kNotListed otherwise), "*"'s, identity's.
    int named[8];
    size_t n = offered.size() < 8 ? offered.size() : 8;
    for (size_t i = 0; i < n; ++i) named[i] = kNotListed;
    int star = kNotListed, identity = kNotListed;
    AcceptedCoding c;
    while (next_accepted_coding(accept_encoding, c)) {
        if (c.name == "*") {
            star = c.q;
        } else if (http::iequals(c.name, "identity")) {
            identity = c.q;
        } else {
            for (size_t i = 0; i < n; ++i) {
                std::string_view name = content_coding_name(offered[i]);
                bool gzip_alias =
                    offered[i] == ContentCoding::Gzip && http::iequals(c.name, "x-gzip");
                if (http::iequals(c.name, name) || gzip_alias)
                    named[i] = named[i] == kNotListed || c.q > named[i] ? c.q : named[i];
            }
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
    if (best.kind == CodingChoice::Kind::Coded && identity > best_q) return {};
    return best;
}

}  // namespace rivet::app
