#include "app/session/sealer.hpp"

#include <openssl/evp.h>
#include <openssl/kdf.h>
#include <openssl/rand.h>

#include <array>
#include <memory>
#include <stdexcept>

#include "app/session/signer.hpp"

namespace rivet::app {

namespace {

constexpr unsigned char kVersion = 1;
constexpr size_t kSaltBytes = 16;
constexpr size_t kKeyBytes = 32;
constexpr size_t kTagBytes = 16;
static_assert(Sealer::kOverheadBytes == 1 + kSaltBytes + kTagBytes);
// Each key seals one value, so one nonce serves all (see sealer.hpp).
constexpr std::array<unsigned char, 12> kNonce{};
// HKDF's info: keys for sealing cookies, of this format, and nothing else.
constexpr std::string_view kKeyInfo = "rivet sealed cookie v1";

using Key = std::array<unsigned char, kKeyBytes>;

struct CipherContextFree {
    void operator()(EVP_CIPHER_CTX* c) const { EVP_CIPHER_CTX_free(c); }
};
struct KeyContextFree {
    void operator()(EVP_PKEY_CTX* c) const { EVP_PKEY_CTX_free(c); }
};
using CipherContext = std::unique_ptr<EVP_CIPHER_CTX, CipherContextFree>;

const unsigned char* bytes(std::string_view s) {
    return reinterpret_cast<const unsigned char*>(s.data());
}

Key derive_key(std::string_view secret, std::string_view salt) {
    std::unique_ptr<EVP_PKEY_CTX, KeyContextFree> ctx(EVP_PKEY_CTX_new_id(EVP_PKEY_HKDF, nullptr));
    Key key;
    size_t length = key.size();
    if (!ctx || EVP_PKEY_derive_init(ctx.get()) <= 0 ||
        EVP_PKEY_CTX_set_hkdf_md(ctx.get(), EVP_sha256()) <= 0 ||
        EVP_PKEY_CTX_set1_hkdf_salt(ctx.get(), bytes(salt), int(salt.size())) <= 0 ||
        EVP_PKEY_CTX_set1_hkdf_key(ctx.get(), bytes(secret), int(secret.size())) <= 0 ||
        EVP_PKEY_CTX_add1_hkdf_info(ctx.get(), bytes(kKeyInfo), int(kKeyInfo.size())) <= 0 ||
        EVP_PKEY_derive(ctx.get(), key.data(), &length) <= 0 || length != key.size())
        throw std::runtime_error("HKDF-SHA256 failed");
    return key;
}

// Starts AES-256-GCM in one direction with `key` and `purpose` as the additional data.
CipherContext start(bool encrypt, const Key& key, std::string_view purpose) {
    CipherContext ctx(EVP_CIPHER_CTX_new());
    int unused = 0;
    if (!ctx ||
        EVP_CipherInit_ex(ctx.get(), EVP_aes_256_gcm(), nullptr, key.data(), kNonce.data(),
                          encrypt ? 1 : 0) != 1 ||
        EVP_CipherUpdate(ctx.get(), nullptr, &unused, bytes(purpose), int(purpose.size())) != 1)
        throw std::runtime_error("AES-256-GCM failed to start");
    return ctx;
}

}  // namespace

Sealer::Sealer(std::string secret) : secret_(std::move(secret)) {
    if (secret_.size() < 32)
        throw std::invalid_argument("an encryption secret needs at least 32 bytes, got " +
                                    std::to_string(secret_.size()));
}

std::string Sealer::seal(std::string_view purpose, std::string_view plaintext) const {
    std::string out(1 + kSaltBytes + plaintext.size() + kTagBytes, '\0');
    auto* raw = reinterpret_cast<unsigned char*>(out.data());
    raw[0] = kVersion;
    unsigned char* salt = raw + 1;
    if (RAND_bytes(salt, int(kSaltBytes)) != 1)
        throw std::runtime_error("no random bytes from OpenSSL");
    const Key key = derive_key(secret_, {reinterpret_cast<char*>(salt), kSaltBytes});
    CipherContext ctx = start(true, key, purpose);
    unsigned char* cipher = salt + kSaltBytes;
    int written = 0, last = 0;
    if (EVP_CipherUpdate(ctx.get(), cipher, &written, bytes(plaintext), int(plaintext.size())) !=
            1 ||
        EVP_CipherFinal_ex(ctx.get(), cipher + written, &last) != 1 ||
        EVP_CIPHER_CTX_ctrl(ctx.get(), EVP_CTRL_GCM_GET_TAG, int(kTagBytes),
                            cipher + plaintext.size()) != 1)
        throw std::runtime_error("AES-256-GCM failed");
    return base64url_encode(out);
}

std::optional<std::string> Sealer::open(std::string_view purpose, std::string_view sealed) const {
    const auto raw = base64url_decode(sealed);
    if (!raw || raw->size() < 1 + kSaltBytes + kTagBytes || uint8_t((*raw)[0]) != kVersion)
        return std::nullopt;
    const std::string_view salt = std::string_view(*raw).substr(1, kSaltBytes);
    const std::string_view cipher =
        std::string_view(*raw).substr(1 + kSaltBytes, raw->size() - 1 - kSaltBytes - kTagBytes);
    std::string tag(raw->end() - kTagBytes, raw->end());
    CipherContext ctx = start(false, derive_key(secret_, salt), purpose);
    std::string plaintext(cipher.size(), '\0');
    auto* out = reinterpret_cast<unsigned char*>(plaintext.data());
    int written = 0, last = 0;
    if (EVP_CipherUpdate(ctx.get(), out, &written, bytes(cipher), int(cipher.size())) != 1 ||
        EVP_CIPHER_CTX_ctrl(ctx.get(), EVP_CTRL_GCM_SET_TAG, int(kTagBytes), tag.data()) != 1)
        throw std::runtime_error("AES-256-GCM failed");
    // The tag is checked here: a changed byte anywhere (or another secret or purpose) fails.
    if (EVP_CipherFinal_ex(ctx.get(), out + written, &last) != 1) return std::nullopt;
    return plaintext;
}

}  // namespace rivet::app
