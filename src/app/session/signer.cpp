#include "app/session/signer.hpp"

#include <openssl/crypto.h>
#include <openssl/evp.h>
#include <openssl/hmac.h>
#include <openssl/rand.h>

#include <array>
#include <stdexcept>

namespace rivet::app {

namespace {

constexpr char kAlphabet[] = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_";

int sextet(unsigned char c) {
    if (c >= 'A' && c <= 'Z') return c - 'A';
    if (c >= 'a' && c <= 'z') return c - 'a' + 26;
    if (c >= '0' && c <= '9') return c - '0' + 52;
    if (c == '-') return 62;
    if (c == '_') return 63;
    return -1;
}

}  // namespace

std::string base64url_encode(std::string_view bytes) {
    std::string out;
    out.reserve((bytes.size() * 4 + 2) / 3);
    size_t i = 0;
    for (; i + 3 <= bytes.size(); i += 3) {
        const uint32_t n = uint32_t(uint8_t(bytes[i])) << 16 |
                           uint32_t(uint8_t(bytes[i + 1])) << 8 | uint8_t(bytes[i + 2]);
        for (int shift = 18; shift >= 0; shift -= 6) out += kAlphabet[(n >> shift) & 63];
    }
    const size_t rest = bytes.size() - i;
    if (rest > 0) {
        uint32_t n = uint32_t(uint8_t(bytes[i])) << 16;
        if (rest == 2) n |= uint32_t(uint8_t(bytes[i + 1])) << 8;
        out += kAlphabet[(n >> 18) & 63];
        out += kAlphabet[(n >> 12) & 63];
        if (rest == 2) out += kAlphabet[(n >> 6) & 63];
    }
    return out;
}

std::optional<std::string> base64url_decode(std::string_view text) {
    if (text.size() % 4 == 1) return std::nullopt;  // no byte count gives that many digits
    std::string out;
    out.reserve(text.size() * 3 / 4);
    uint32_t bits = 0;
    int count = 0;
    for (unsigned char c : text) {
        const int v = sextet(c);
        if (v < 0) return std::nullopt;
        bits = bits << 6 | uint32_t(v);
        count += 6;
        if (count >= 8) {
            count -= 8;
            out += char((bits >> count) & 0xFF);
        }
    }
    // Leftover bits must be zero: one text per byte string, so a signature cannot be varied.
    if ((bits & ((1u << count) - 1)) != 0) return std::nullopt;
    return out;
}

std::string random_token(size_t bytes) {
    std::string raw(bytes, '\0');
    if (RAND_bytes(reinterpret_cast<unsigned char*>(raw.data()), int(bytes)) != 1)
        throw std::runtime_error("no random bytes from OpenSSL");
    return base64url_encode(raw);
}

bool equal_in_constant_time(std::string_view a, std::string_view b) {
    return a.size() == b.size() && CRYPTO_memcmp(a.data(), b.data(), a.size()) == 0;
}

Signer::Signer(std::string key) : key_(std::move(key)) {
    if (key_.size() < 32)
        throw std::invalid_argument("a signing secret needs at least 32 bytes, got " +
                                    std::to_string(key_.size()));
}

std::string Signer::mac(std::string_view purpose, std::string_view value) const {
    // purpose NUL value: the NUL keeps ("ab", "c") and ("a", "bc") apart.
    std::string message;
    message.reserve(purpose.size() + 1 + value.size());
    message.append(purpose).push_back('\0');
    message.append(value);
    std::array<unsigned char, EVP_MAX_MD_SIZE> digest;
    unsigned length = 0;
    if (!HMAC(EVP_sha256(), key_.data(), int(key_.size()),
              reinterpret_cast<const unsigned char*>(message.data()), message.size(), digest.data(),
              &length))
        throw std::runtime_error("HMAC-SHA256 failed");
    return base64url_encode({reinterpret_cast<const char*>(digest.data()), length});
}

std::string Signer::sign(std::string_view purpose, std::string_view value) const {
    std::string out(value);
    out += '.';
    out += mac(purpose, value);
    return out;
}

std::optional<std::string_view> Signer::verify(std::string_view purpose,
                                               std::string_view signed_text) const {
    const size_t dot = signed_text.rfind('.');
    if (dot == std::string_view::npos) return std::nullopt;
    const std::string_view value = signed_text.substr(0, dot);
    if (!equal_in_constant_time(signed_text.substr(dot + 1), mac(purpose, value)))
        return std::nullopt;
    return value;
}

}  // namespace rivet::app
