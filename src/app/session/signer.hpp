// HMAC-SHA256 signatures for cookie values, base64url text and random tokens: what sessions
// and CSRF tokens are made of.
#pragma once

#include <optional>
#include <string>
#include <string_view>

namespace rivet::app {

// base64url without padding (RFC 4648 §5): cookie-octets only.
std::string base64url_encode(std::string_view bytes);
// nullopt for a byte outside the alphabet or an impossible length.
std::optional<std::string> base64url_decode(std::string_view text);

// `bytes` random bytes from OpenSSL's CSPRNG, as base64url; throws std::runtime_error when it
// has none to give.
std::string random_token(size_t bytes);

// a == b in time that depends on their lengths only, not on where they differ.
bool equal_in_constant_time(std::string_view a, std::string_view b);

class Signer {
public:
    // Throws std::invalid_argument for a key under 32 bytes.
    explicit Signer(std::string key);

    // "<value>.<base64url MAC>". `purpose` is signed with the value, so a value signed for one
    // use (a session id) is not accepted for another (a cookie's data).
    std::string sign(std::string_view purpose, std::string_view value) const;
    // The value of a signed text whose MAC matches, compared in constant time; nullopt else.
    std::optional<std::string_view> verify(std::string_view purpose,
                                           std::string_view signed_text) const;

private:
    std::string mac(std::string_view purpose, std::string_view value) const;
    std::string key_;
};

}  // namespace rivet::app
