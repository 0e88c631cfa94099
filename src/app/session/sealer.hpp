// Authenticated encryption for cookie values: what an encrypted cookie session is made of. The
// visitor can neither read nor change what it carries.
#pragma once

#include <optional>
#include <string>
#include <string_view>

namespace rivet::app {

// AES-256-GCM under a key of its own for every sealed value: the key is HKDF-SHA256 of the
// secret and 16 random bytes (the salt) sent with the value, so no key ever encrypts twice and
// the nonce can be fixed. (A random 96-bit GCM nonce under one key would be safe for about 2^32
// values; a busy site writes that many session cookies.) A sealed value is base64url of
//   version (1 byte) | salt (16) | ciphertext | tag (16)
// 44 characters more than the base64url of the plaintext, give or take one.
class Sealer {
public:
    // Throws std::invalid_argument for a secret under 32 bytes.
    explicit Sealer(std::string secret);

    // Raw bytes a sealed value adds to its plaintext (before base64url): version, salt, tag.
    static constexpr size_t kOverheadBytes = 1 + 16 + 16;

    // `purpose` is authenticated with the value (not sent), so a value sealed for one use does
    // not open for another. Throws std::runtime_error when OpenSSL fails or has no random bytes.
    std::string seal(std::string_view purpose, std::string_view plaintext) const;
    // The plaintext of a value sealed with this secret and purpose; nullopt for anything else
    // (another secret or purpose, a changed byte, a truncated or malformed text).
    std::optional<std::string> open(std::string_view purpose, std::string_view sealed) const;

private:
    std::string secret_;
};

}  // namespace rivet::app
