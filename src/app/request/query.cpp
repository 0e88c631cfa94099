// Percent-decoding and application/x-www-form-urlencoded parsing.
#include "app/request/query.hpp"

namespace rivet::app {

namespace {

int hex_value(char c) {
    if (c >= '0' && c <= '9') return c - '0';
    if (c >= 'a' && c <= 'f') return c - 'a' + 10;
    if (c >= 'A' && c <= 'F') return c - 'A' + 10;
    return -1;
}

// Decodes, or keeps the bytes as sent when an escape is malformed: parse_query promises not to
// drop data a client sent, even when it is not well-formed.
std::string decode_or_raw(std::string_view in) {
    if (auto d = percent_decode(in, true)) return std::move(*d);
    return std::string(in);
}

// Calls f(key, value) with the raw halves of each non-empty '&' piece, in order; stops early when
// f returns true.
template <class F>
void for_each_piece(std::string_view q, F&& f) {
    while (!q.empty()) {
        size_t amp = q.find('&');
        std::string_view piece = q.substr(0, amp);
        q = amp == std::string_view::npos ? std::string_view{} : q.substr(amp + 1);
        if (piece.empty()) continue;
        size_t eq = piece.find('=');
        std::string_view key = piece.substr(0, eq);
        std::string_view value =
            eq == std::string_view::npos ? std::string_view{} : piece.substr(eq + 1);
        if (f(key, value)) return;
    }
}

}  // namespace

std::optional<std::string> percent_decode(std::string_view in, bool plus_is_space) {
    std::string out;
    out.reserve(in.size());
    for (size_t i = 0; i < in.size(); ++i) {
        char c = in[i];
        if (c == '%') {
            if (in.size() - i < 3) return std::nullopt;
            int hi = hex_value(in[i + 1]);
            int lo = hex_value(in[i + 2]);
            if (hi < 0 || lo < 0) return std::nullopt;
            out.push_back(static_cast<char>(hi * 16 + lo));
            i += 2;
        } else if (c == '+' && plus_is_space) {
            out.push_back(' ');
        } else {
            out.push_back(c);
        }
    }
    return out;
}

std::vector<std::pair<std::string, std::string>> parse_query(std::string_view query) {
    std::vector<std::pair<std::string, std::string>> out;
    for_each_piece(query, [&](std::string_view k, std::string_view v) {
        out.emplace_back(decode_or_raw(k), decode_or_raw(v));
        return false;
    });
    return out;
}

std::optional<std::string> form_value(std::string_view query_or_form, std::string_view key) {
    std::optional<std::string> found;
    for_each_piece(query_or_form, [&](std::string_view k, std::string_view v) {
        // Most keys are plain ASCII: compare them in place instead of decoding each one.
        const bool plain = k.find_first_of("%+") == std::string_view::npos;
        if (plain ? k != key : decode_or_raw(k) != key) return false;
        found = decode_or_raw(v);
        return true;
    });
    return found;
}

}  // namespace rivet::app
