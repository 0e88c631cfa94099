// The opening handshake's keys (RFC 6455 §4.2.1, §4.2.2): SHA-1 and base64 from libcrypto.
#include "http/websocket/handshake.hpp"

#include <openssl/evp.h>

namespace rivet::http::ws {

namespace {

bool base64_char(char c) {
    return (c >= 'A' && c <= 'Z') || (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') || c == '+' ||
           c == '/';
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

std::string_view trim(std::string_view s) {
    while (!s.empty() && (s.front() == ' ' || s.front() == '\t')) s.remove_prefix(1);
    while (!s.empty() && (s.back() == ' ' || s.back() == '\t')) s.remove_suffix(1);
    return s;
}

}  // namespace

bool valid_key(std::string_view key) {
    // 16 bytes are 22 base64 characters and "==". The last character's 4 unused bits are not
    // checked: a decoder ignores them, so the key still decodes to 16 bytes.
    if (key.size() != 24 || key[22] != '=' || key[23] != '=') return false;
    for (size_t i = 0; i < 22; ++i)
        if (!base64_char(key[i])) return false;
    return true;
}

std::string accept_key(std::string_view key) {
    static constexpr std::string_view kGuid = "258EAFA5-E914-47DA-95CA-C5AB0DC85B11";
    std::string input;
    input.reserve(key.size() + kGuid.size());
    input.append(key).append(kGuid);
    unsigned char digest[EVP_MAX_MD_SIZE];
    unsigned int digest_length = 0;
    if (EVP_Digest(input.data(), input.size(), digest, &digest_length, EVP_sha1(), nullptr) != 1)
        return {};
    unsigned char encoded[4 * ((EVP_MAX_MD_SIZE + 2) / 3) + 1];
    const int n = EVP_EncodeBlock(encoded, digest, int(digest_length));
    return std::string(reinterpret_cast<const char*>(encoded), size_t(n));
}

std::vector<std::string_view> split_tokens(std::string_view value) {
    std::vector<std::string_view> tokens;
    while (!value.empty()) {
        const size_t comma = value.find(',');
        const std::string_view token = trim(value.substr(0, comma));
        if (!token.empty()) tokens.push_back(token);
        if (comma == std::string_view::npos) break;
        value.remove_prefix(comma + 1);
    }
    return tokens;
}

bool has_token(std::string_view value, std::string_view token) {
    for (const std::string_view t : split_tokens(value))
        if (iequals(t, token)) return true;
    return false;
}

}  // namespace rivet::http::ws
