// Sec-WebSocket-Extensions (RFC 6455 §9.1, RFC 7692 §5, §7.1): the offers parsed whole, then
// the first permessage-deflate offer the server can accept. An offer with an unknown, repeated
// or badly valued parameter is declined (§5.1, §7); only a header that cannot be parsed at all
// is malformed.
#include <algorithm>
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "http/websocket/deflate.hpp"

namespace rivet::http::ws {

namespace {

struct Param {
    std::string_view name;
    std::string value;  // unquoted
    bool has_value = false;
};

struct Offer {
    std::string_view name;
    std::vector<Param> params;
};

bool tchar(char c) {
    if ((c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9')) return true;
    return std::string_view("!#$%&'*+-.^_`|~").find(c) != std::string_view::npos;
}

char lower(char c) {
    return c >= 'A' && c <= 'Z' ? char(c + ('a' - 'A')) : c;
}

bool iequals(std::string_view a, std::string_view b) {
    if (a.size() != b.size()) return false;
    for (size_t i = 0; i < a.size(); ++i)
        if (lower(a[i]) != lower(b[i])) return false;
    return true;
}

// A cursor over the header with the grammar's pieces: tokens, quoted strings, whitespace.
struct Cursor {
    std::string_view s;
    size_t i = 0;

    bool done() const { return i == s.size(); }
    char peek() const { return s[i]; }
    void skip_ows() {
        while (i < s.size() && (s[i] == ' ' || s[i] == '\t')) ++i;
    }
    std::string_view token() {
        const size_t start = i;
        while (i < s.size() && tchar(s[i])) ++i;
        return s.substr(start, i - start);
    }
    bool quoted(std::string& out) {  // at the opening quote
        ++i;
        while (i < s.size()) {
            const char c = s[i++];
            if (c == '"') return true;
            if (c == '\\') {
                if (i == s.size()) return false;
                out += s[i++];
            } else {
                out += c;
            }
        }
        return false;
    }
};

// extension-list = 1#( token *( ";" param ) ), param = token [ "=" ( token / quoted-string ) ];
// empty list elements are allowed (RFC 9110 §5.6.1).
bool parse_offers(std::string_view header, std::vector<Offer>& offers) {
    Cursor c{header};
    for (;;) {
        c.skip_ows();
        if (c.done()) return true;
        if (c.peek() == ',') {
            ++c.i;
            continue;
        }
        Offer offer;
        offer.name = c.token();
        if (offer.name.empty()) return false;
        c.skip_ows();
        while (!c.done() && c.peek() == ';') {
            ++c.i;
            c.skip_ows();
            Param param;
            param.name = c.token();
            if (param.name.empty()) return false;
            c.skip_ows();
            if (!c.done() && c.peek() == '=') {
                ++c.i;
                c.skip_ows();
                param.has_value = true;
                if (!c.done() && c.peek() == '"') {
                    if (!c.quoted(param.value)) return false;
                } else {
                    param.value = std::string(c.token());
                    if (param.value.empty()) return false;
                }
                c.skip_ows();
            }
            offer.params.push_back(std::move(param));
        }
        if (!c.done() && c.peek() != ',') return false;
        offers.push_back(std::move(offer));
    }
}

// A window size: 8..15 in decimal, no leading zero (RFC 7692 §7.1.2).
int window_bits(const std::string& v) {
    if (v.size() == 1 && v[0] >= '8' && v[0] <= '9') return v[0] - '0';
    if (v.size() == 2 && v[0] == '1' && v[1] >= '0' && v[1] <= '5') return 10 + (v[1] - '0');
    return -1;
}

// The agreement for one offer, or false to decline it.
bool accept(const Offer& offer, const DeflateConfig& config, DeflateParams& params,
            std::string& response) {
    bool seen_snct = false, seen_cnct = false, seen_smwb = false, seen_cmwb = false;
    int smwb = -1, cmwb = -1;  // offered values; cmwb stays -1 for a bare client_max_window_bits
    for (const Param& p : offer.params) {
        bool* seen;
        if (iequals(p.name, "server_no_context_takeover"))
            seen = &seen_snct;
        else if (iequals(p.name, "client_no_context_takeover"))
            seen = &seen_cnct;
        else if (iequals(p.name, "server_max_window_bits"))
            seen = &seen_smwb;
        else if (iequals(p.name, "client_max_window_bits"))
            seen = &seen_cmwb;
        else
            return false;         // unknown
        if (*seen) return false;  // repeated
        *seen = true;
        if (seen == &seen_snct || seen == &seen_cnct) {
            if (p.has_value) return false;
        } else if (seen == &seen_smwb) {
            if (!p.has_value || (smwb = window_bits(p.value)) < 0) return false;
        } else if (p.has_value && (cmwb = window_bits(p.value)) < 0) {
            return false;
        }
    }
    // zlib's raw deflate cannot compress with a window of 8 (it would use 9, which the client's
    // inflater, sized for 8, may refuse).
    if (smwb == 8) return false;

    params = DeflateParams{};
    params.server_no_context_takeover = seen_snct || config.server_no_context_takeover;
    params.client_no_context_takeover = seen_cnct;
    const int ours = std::clamp<int>(config.server_max_window_bits, 9, 15);
    params.server_max_window_bits = uint8_t(smwb > 0 ? std::min(smwb, ours) : ours);
    params.client_max_window_bits = uint8_t(cmwb > 0 ? cmwb : 15);

    response = "permessage-deflate";
    if (params.server_no_context_takeover) response += "; server_no_context_takeover";
    if (params.client_no_context_takeover) response += "; client_no_context_takeover";
    // Answered only when offered: a smaller window than 15 needs no word (the client's inflater
    // takes any window up to 15), and the client then knows what it asked for.
    if (seen_smwb)
        response += "; server_max_window_bits=" + std::to_string(params.server_max_window_bits);
    // A bare client_max_window_bits leaves the client at 15 when the answer omits it (§7.1.2.2).
    if (cmwb > 0)
        response += "; client_max_window_bits=" + std::to_string(params.client_max_window_bits);
    return true;
}

}  // namespace

bool negotiate_deflate(std::string_view offers, const DeflateConfig& config, DeflateParams& params,
                       std::string& response, bool& malformed) {
    malformed = false;
    if (!config.enabled) return false;  // the header is then none of the server's business
    std::vector<Offer> parsed;
    if (!parse_offers(offers, parsed)) {
        malformed = true;
        return false;
    }
    for (const Offer& offer : parsed)
        if (iequals(offer.name, "permessage-deflate") && accept(offer, config, params, response))
            return true;
    return false;
}

}  // namespace rivet::http::ws
