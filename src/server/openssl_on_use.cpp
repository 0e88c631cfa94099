// OpenSSL, loaded when the server first calls it rather than when it starts.
//
// Linked the usual way, libssl and libcrypto cost every rivet process about 1.8 MB of resident
// memory before it serves a byte: the dynamic linker reads their symbol and relocation tables and
// writes their relocated data at load (Debian links libcrypto with BIND_NOW), TLS configured or
// not (docs/BENCHMARKS.md, "OpenSSL when it is used"). The server executable therefore does not
// link them (CMakeLists.txt: RIVET_OPENSSL_ON_USE). Each OpenSSL function it calls is defined
// here instead, hidden from other objects, as a forwarder: its first call opens libssl.so.3 (which
// brings libcrypto.so.3) and looks the real function up once. A server with TLS loads it while it
// reads its certificates; one without, when it first needs a digest (a WebSocket handshake's
// SHA-1), or never.
//
// The list is what the server's objects call, also in a build that keeps the functions nothing
// reaches (the sanitizers' builds do not pass --gc-sections). A call the list lacks fails the
// server's link ("undefined reference to ..."): add a line for it. Each line's types must match
// OpenSSL's own declaration, or the compiler refuses it as a conflicting declaration of a C
// function. The library (librivet) and the tests link OpenSSL as usual; this file is the
// executable's only.
#include <dlfcn.h>
#include <openssl/crypto.h>
#include <openssl/err.h>
#include <openssl/evp.h>
#include <openssl/hmac.h>
#include <openssl/kdf.h>
#include <openssl/opensslv.h>
#include <openssl/params.h>
#include <openssl/pem.h>
#include <openssl/rand.h>
#include <openssl/sha.h>
#include <openssl/ssl.h>
#include <openssl/x509v3.h>
#include <strings.h>

#include <atomic>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <mutex>
#include <string>
#include <type_traits>

#include "app/operations/error_log.hpp"

static_assert(OPENSSL_VERSION_MAJOR == 3, "libssl.so.3 is the ABI this file was written against");

namespace {

constexpr const char* kLibssl = "libssl.so.3";

// The library's handle once loaded. A failed load is not kept: it may be passing (no descriptor
// left under EMFILE, no memory), and the server must go on serving, so the call that met it fails
// as OpenSSL's own calls fail (0 or null), and a call a second or more later tries again; calls
// in between fail at once rather than queue for dlopen one after another. The first failure and
// the load that follows failures are logged; the ones between are counted.
constexpr std::chrono::seconds kRetryAfter{1};
std::atomic<void*> handle{nullptr};
std::atomic<std::chrono::steady_clock::rep> next_try{0};  // steady_clock ticks
std::mutex loading;
unsigned failed_loads = 0;  // under `loading`

void* libssl() {
    if (void* h = handle.load(std::memory_order_acquire)) return h;
    const auto now = std::chrono::steady_clock::now();
    if (now.time_since_epoch().count() < next_try.load(std::memory_order_relaxed)) return nullptr;
    std::string said;  // logged after the lock: a slow log must not hold up other first calls
    void* h = nullptr;
    {
        std::lock_guard lock(loading);
        if ((h = handle.load(std::memory_order_relaxed))) return h;
        h = dlopen(kLibssl, RTLD_NOW | RTLD_LOCAL);
        if (h) {
            if (failed_loads > 0)
                said = "OpenSSL loaded after " + std::to_string(failed_loads) + " failed attempts";
            handle.store(h, std::memory_order_release);
        } else {
            next_try.store((now + kRetryAfter).time_since_epoch().count(),
                           std::memory_order_relaxed);
            if (failed_loads++ == 0) {
                const char* why = dlerror();
                said = std::string("cannot load OpenSSL (") + kLibssl +
                       "): " + (why ? why : "not found") +
                       "; what needs it fails until a later call loads it";
            }
        }
    }
    if (!said.empty()) (h ? rivet::app::log_warn : rivet::app::log_error)(said);
    return h;
}

// A loaded libssl (or the libcrypto it brings, which dlsym searches next) without a function
// the server was compiled against is another OpenSSL 3 than the headers': an installation
// error that no retry mends.
void* openssl_function(const char* name) {
    void* h = libssl();
    if (!h) return nullptr;
    void* f = dlsym(h, name);
    if (!f) {
        std::fprintf(stderr, "rivet: %s has no %s: %s\n", kLibssl, name, dlerror());
        std::_Exit(EXIT_FAILURE);
    }
    return f;
}

// The real function, looked up at the first call that finds the library loaded and kept in
// `slot`; null while the library cannot be loaded.
template <typename Function>
Function real(std::atomic<Function>& slot, const char* name) {
    Function f = slot.load(std::memory_order_acquire);
    if (!f) {
        f = reinterpret_cast<Function>(openssl_function(name));
        if (f) slot.store(f, std::memory_order_release);
    }
    return f;
}

// What a call returns while OpenSSL cannot be loaded: 0 or null, OpenSSL's failure for every
// function below that can be called before another has made an object for it (those that take
// an object are only reached with one, made after a load). The exceptions are written out below.
template <typename Result>
Result not_loaded() {
    if constexpr (!std::is_void_v<Result>) return Result{};
}

}  // namespace

#define RIVET_HIDDEN extern "C" __attribute__((visibility("hidden")))

// One forwarder: the type and name of the function, its parameters and the arguments that pass
// them on.
#define RIVET_ON_USE(result, name, parameters, arguments)    \
    RIVET_HIDDEN result name parameters {                    \
        static std::atomic<decltype(&::name)> slot{nullptr}; \
        if (auto f = real(slot, #name)) return f arguments;  \
        return not_loaded<result>();                         \
    }

// Where 0 would not say "failed": CRYPTO_memcmp's 0 is "equal", so without the library it
// compares here, every byte whatever differs; OPENSSL_cleanse must still clear;
// ERR_error_string_n's buffer must still hold a string.
RIVET_HIDDEN int CRYPTO_memcmp(const void* a, const void* b, size_t n) {
    static std::atomic<decltype(&::CRYPTO_memcmp)> slot{nullptr};
    if (auto f = real(slot, "CRYPTO_memcmp")) return f(a, b, n);
    const volatile unsigned char* x = static_cast<const volatile unsigned char*>(a);
    const volatile unsigned char* y = static_cast<const volatile unsigned char*>(b);
    unsigned char differ = 0;
    for (size_t i = 0; i < n; ++i) differ |= x[i] ^ y[i];
    return differ != 0;
}
RIVET_HIDDEN void OPENSSL_cleanse(void* p, size_t n) {
    static std::atomic<decltype(&::OPENSSL_cleanse)> slot{nullptr};
    if (auto f = real(slot, "OPENSSL_cleanse")) return f(p, n);
    explicit_bzero(p, n);
}
RIVET_HIDDEN void ERR_error_string_n(unsigned long e, char* buf, size_t len) {
    static std::atomic<decltype(&::ERR_error_string_n)> slot{nullptr};
    if (auto f = real(slot, "ERR_error_string_n")) return f(e, buf, len);
    if (len > 0) std::snprintf(buf, len, "OpenSSL is not loaded");
}

// clang-format off
RIVET_ON_USE(const unsigned char*, ASN1_STRING_get0_data, (const ASN1_STRING* a0), (a0))
RIVET_ON_USE(int, ASN1_STRING_length, (const ASN1_STRING* a0), (a0))
RIVET_ON_USE(int, ASN1_TIME_to_tm, (const ASN1_TIME* a0, struct tm* a1), (a0, a1))
RIVET_ON_USE(void, BIO_clear_flags, (BIO* a0, int a1), (a0, a1))
RIVET_ON_USE(long, BIO_ctrl, (BIO* a0, int a1, long a2, void* a3), (a0, a1, a2, a3))
RIVET_ON_USE(int, BIO_free, (BIO* a0), (a0))
RIVET_ON_USE(void*, BIO_get_data, (BIO* a0), (a0))
RIVET_ON_USE(int, BIO_get_new_index, (), ())
RIVET_ON_USE(BIO_METHOD*, BIO_meth_new, (int a0, const char* a1), (a0, a1))
RIVET_ON_USE(int, BIO_meth_set_create, (BIO_METHOD* a0, int (*a1)(BIO *)), (a0, a1))
RIVET_ON_USE(int, BIO_meth_set_ctrl, (BIO_METHOD* a0, long (*a1)(BIO *, int, long, void *)), (a0, a1))
RIVET_ON_USE(int, BIO_meth_set_destroy, (BIO_METHOD* a0, int (*a1)(BIO *)), (a0, a1))
RIVET_ON_USE(int, BIO_meth_set_read, (BIO_METHOD* a0, int (*a1)(BIO *, char *, int)), (a0, a1))
RIVET_ON_USE(int, BIO_meth_set_write, (BIO_METHOD* a0, int (*a1)(BIO *, const char *, int)), (a0, a1))
RIVET_ON_USE(BIO*, BIO_new, (const BIO_METHOD* a0), (a0))
RIVET_ON_USE(BIO*, BIO_new_mem_buf, (const void* a0, int a1), (a0, a1))
RIVET_ON_USE(const BIO_METHOD*, BIO_s_mem, (), ())
RIVET_ON_USE(void, BIO_set_data, (BIO* a0, void* a1), (a0, a1))
RIVET_ON_USE(void, BIO_set_flags, (BIO* a0, int a1), (a0, a1))
RIVET_ON_USE(void, BIO_set_init, (BIO* a0, int a1), (a0, a1))
RIVET_ON_USE(void, ERR_clear_error, (), ())
RIVET_ON_USE(unsigned long, ERR_get_error, (), ())
RIVET_ON_USE(unsigned long, ERR_peek_error, (), ())
RIVET_ON_USE(unsigned long, ERR_peek_last_error, (), ())
RIVET_ON_USE(int, EVP_CIPHER_CTX_ctrl, (EVP_CIPHER_CTX* a0, int a1, int a2, void* a3), (a0, a1, a2, a3))
RIVET_ON_USE(void, EVP_CIPHER_CTX_free, (EVP_CIPHER_CTX* a0), (a0))
RIVET_ON_USE(EVP_CIPHER_CTX*, EVP_CIPHER_CTX_new, (), ())
RIVET_ON_USE(EVP_CIPHER*, EVP_CIPHER_fetch, (OSSL_LIB_CTX* a0, const char* a1, const char* a2), (a0, a1, a2))
RIVET_ON_USE(void, EVP_CIPHER_free, (EVP_CIPHER* a0), (a0))
RIVET_ON_USE(int, EVP_CIPHER_get_iv_length, (const EVP_CIPHER* a0), (a0))
RIVET_ON_USE(int, EVP_CipherFinal_ex, (EVP_CIPHER_CTX* a0, unsigned char* a1, int* a2), (a0, a1, a2))
RIVET_ON_USE(int, EVP_CipherInit_ex, (EVP_CIPHER_CTX* a0, const EVP_CIPHER* a1, ENGINE* a2, const unsigned char* a3, const unsigned char* a4, int a5), (a0, a1, a2, a3, a4, a5))
RIVET_ON_USE(int, EVP_CipherUpdate, (EVP_CIPHER_CTX* a0, unsigned char* a1, int* a2, const unsigned char* a3, int a4), (a0, a1, a2, a3, a4))
RIVET_ON_USE(int, EVP_DecryptInit_ex, (EVP_CIPHER_CTX* a0, const EVP_CIPHER* a1, ENGINE* a2, const unsigned char* a3, const unsigned char* a4), (a0, a1, a2, a3, a4))
RIVET_ON_USE(int, EVP_Digest, (const void* a0, size_t a1, unsigned char* a2, unsigned int* a3, const EVP_MD* a4, ENGINE* a5), (a0, a1, a2, a3, a4, a5))
RIVET_ON_USE(int, EVP_DigestFinal_ex, (EVP_MD_CTX* a0, unsigned char* a1, unsigned int* a2), (a0, a1, a2))
RIVET_ON_USE(int, EVP_DigestInit_ex, (EVP_MD_CTX* a0, const EVP_MD* a1, ENGINE* a2), (a0, a1, a2))
RIVET_ON_USE(int, EVP_DigestUpdate, (EVP_MD_CTX* a0, const void* a1, size_t a2), (a0, a1, a2))
RIVET_ON_USE(int, EVP_EncodeBlock, (unsigned char* a0, const unsigned char* a1, int a2), (a0, a1, a2))
RIVET_ON_USE(int, EVP_EncryptInit_ex, (EVP_CIPHER_CTX* a0, const EVP_CIPHER* a1, ENGINE* a2, const unsigned char* a3, const unsigned char* a4), (a0, a1, a2, a3, a4))
RIVET_ON_USE(int, EVP_MAC_CTX_set_params, (EVP_MAC_CTX* a0, const OSSL_PARAM a1[]), (a0, a1))
RIVET_ON_USE(void, EVP_MD_CTX_free, (EVP_MD_CTX* a0), (a0))
RIVET_ON_USE(EVP_MD_CTX*, EVP_MD_CTX_new, (), ())
RIVET_ON_USE(int, EVP_PKEY_CTX_add1_hkdf_info, (EVP_PKEY_CTX* a0, const unsigned char* a1, int a2), (a0, a1, a2))
RIVET_ON_USE(void, EVP_PKEY_CTX_free, (EVP_PKEY_CTX* a0), (a0))
RIVET_ON_USE(EVP_PKEY_CTX*, EVP_PKEY_CTX_new_id, (int a0, ENGINE* a1), (a0, a1))
RIVET_ON_USE(int, EVP_PKEY_CTX_set1_hkdf_key, (EVP_PKEY_CTX* a0, const unsigned char* a1, int a2), (a0, a1, a2))
RIVET_ON_USE(int, EVP_PKEY_CTX_set1_hkdf_salt, (EVP_PKEY_CTX* a0, const unsigned char* a1, int a2), (a0, a1, a2))
RIVET_ON_USE(int, EVP_PKEY_CTX_set_hkdf_md, (EVP_PKEY_CTX* a0, const EVP_MD* a1), (a0, a1))
RIVET_ON_USE(int, EVP_PKEY_derive, (EVP_PKEY_CTX* a0, unsigned char* a1, size_t* a2), (a0, a1, a2))
RIVET_ON_USE(int, EVP_PKEY_derive_init, (EVP_PKEY_CTX* a0), (a0))
RIVET_ON_USE(void, EVP_PKEY_free, (EVP_PKEY* a0), (a0))
RIVET_ON_USE(const EVP_CIPHER*, EVP_aes_256_gcm, (), ())
RIVET_ON_USE(const EVP_MD*, EVP_sha1, (), ())
RIVET_ON_USE(const EVP_MD*, EVP_sha256, (), ())
RIVET_ON_USE(void, GENERAL_NAMES_free, (GENERAL_NAMES* a0), (a0))
RIVET_ON_USE(unsigned char*, HMAC, (const EVP_MD* a0, const void* a1, int a2, const unsigned char* a3, size_t a4, unsigned char* a5, unsigned int* a6), (a0, a1, a2, a3, a4, a5, a6))
RIVET_ON_USE(int, OPENSSL_sk_num, (const OPENSSL_STACK* a0), (a0))
RIVET_ON_USE(void*, OPENSSL_sk_value, (const OPENSSL_STACK* a0, int a1), (a0, a1))
RIVET_ON_USE(OSSL_PARAM, OSSL_PARAM_construct_end, (), ())
RIVET_ON_USE(OSSL_PARAM, OSSL_PARAM_construct_octet_string, (const char* a0, void* a1, size_t a2), (a0, a1, a2))
RIVET_ON_USE(OSSL_PARAM, OSSL_PARAM_construct_utf8_string, (const char* a0, char* a1, size_t a2), (a0, a1, a2))
RIVET_ON_USE(EVP_PKEY*, PEM_read_bio_PrivateKey, (BIO* a0, EVP_PKEY** a1, pem_password_cb* a2, void* a3), (a0, a1, a2, a3))
RIVET_ON_USE(X509*, PEM_read_bio_X509, (BIO* a0, X509** a1, pem_password_cb* a2, void* a3), (a0, a1, a2, a3))
RIVET_ON_USE(int, RAND_bytes, (unsigned char* a0, int a1), (a0, a1))
RIVET_ON_USE(const char*, SSL_CIPHER_get_name, (const SSL_CIPHER* a0), (a0))
RIVET_ON_USE(long, SSL_CTX_callback_ctrl, (SSL_CTX* a0, int a1, void (*a2)(void)), (a0, a1, a2))
RIVET_ON_USE(long, SSL_CTX_ctrl, (SSL_CTX* a0, int a1, long a2, void* a3), (a0, a1, a2, a3))
RIVET_ON_USE(void, SSL_CTX_free, (SSL_CTX* a0), (a0))
RIVET_ON_USE(void*, SSL_CTX_get_ex_data, (const SSL_CTX* a0, int a1), (a0, a1))
RIVET_ON_USE(SSL_CTX*, SSL_CTX_new, (const SSL_METHOD* a0), (a0))
RIVET_ON_USE(void, SSL_CTX_set_alpn_select_cb, (SSL_CTX* a0, SSL_CTX_alpn_select_cb_func a1, void* a2), (a0, a1, a2))
RIVET_ON_USE(int, SSL_CTX_set_cipher_list, (SSL_CTX* a0, const char* a1), (a0, a1))
RIVET_ON_USE(int, SSL_CTX_set_ex_data, (SSL_CTX* a0, int a1, void* a2), (a0, a1, a2))
RIVET_ON_USE(int, SSL_CTX_set_num_tickets, (SSL_CTX* a0, size_t a1), (a0, a1))
RIVET_ON_USE(uint64_t, SSL_CTX_set_options, (SSL_CTX* a0, uint64_t a1), (a0, a1))
RIVET_ON_USE(int, SSL_CTX_set_session_id_context, (SSL_CTX* a0, const unsigned char* a1, unsigned int a2), (a0, a1, a2))
RIVET_ON_USE(long, SSL_CTX_set_timeout, (SSL_CTX* a0, long a1), (a0, a1))
RIVET_ON_USE(int, SSL_CTX_set_tlsext_ticket_key_evp_cb, (SSL_CTX* a0, int (*a1)(SSL *, unsigned char *, unsigned char *, EVP_CIPHER_CTX *, EVP_MAC_CTX *, int)), (a0, a1))
RIVET_ON_USE(int, SSL_CTX_use_PrivateKey, (SSL_CTX* a0, EVP_PKEY* a1), (a0, a1))
RIVET_ON_USE(int, SSL_CTX_use_certificate, (SSL_CTX* a0, X509* a1), (a0, a1))
RIVET_ON_USE(long, SSL_ctrl, (SSL* a0, int a1, long a2, void* a3), (a0, a1, a2, a3))
RIVET_ON_USE(int, SSL_do_handshake, (SSL* a0), (a0))
RIVET_ON_USE(void, SSL_free, (SSL* a0), (a0))
RIVET_ON_USE(void, SSL_get0_alpn_selected, (const SSL* a0, const unsigned char** a1, unsigned int* a2), (a0, a1, a2))
RIVET_ON_USE(SSL_CTX*, SSL_get_SSL_CTX, (const SSL* a0), (a0))
RIVET_ON_USE(const SSL_CIPHER*, SSL_get_current_cipher, (const SSL* a0), (a0))
RIVET_ON_USE(int, SSL_get_error, (const SSL* a0, int a1), (a0, a1))
RIVET_ON_USE(const char*, SSL_get_servername, (const SSL* a0, const int a1), (a0, a1))
RIVET_ON_USE(const char*, SSL_get_version, (const SSL* a0), (a0))
RIVET_ON_USE(int, SSL_has_pending, (const SSL* a0), (a0))
RIVET_ON_USE(SSL*, SSL_new, (SSL_CTX* a0), (a0))
RIVET_ON_USE(int, SSL_read_ex, (SSL* a0, void* a1, size_t a2, size_t* a3), (a0, a1, a2, a3))
RIVET_ON_USE(int, SSL_session_reused, (const SSL* a0), (a0))
RIVET_ON_USE(SSL_CTX*, SSL_set_SSL_CTX, (SSL* a0, SSL_CTX* a1), (a0, a1))
RIVET_ON_USE(void, SSL_set_accept_state, (SSL* a0), (a0))
RIVET_ON_USE(void, SSL_set_bio, (SSL* a0, BIO* a1, BIO* a2), (a0, a1, a2))
RIVET_ON_USE(void, SSL_set_shutdown, (SSL* a0, int a1), (a0, a1))
RIVET_ON_USE(int, SSL_shutdown, (SSL* a0), (a0))
RIVET_ON_USE(int, SSL_version, (const SSL* a0), (a0))
RIVET_ON_USE(int, SSL_write_ex, (SSL* a0, const void* a1, size_t a2, size_t* a3), (a0, a1, a2, a3))
RIVET_ON_USE(const SSL_METHOD*, TLS_server_method, (), ())
RIVET_ON_USE(ASN1_STRING*, X509_NAME_ENTRY_get_data, (const X509_NAME_ENTRY* a0), (a0))
RIVET_ON_USE(X509_NAME_ENTRY*, X509_NAME_get_entry, (const X509_NAME* a0, int a1), (a0, a1))
RIVET_ON_USE(int, X509_NAME_get_index_by_NID, (const X509_NAME* a0, int a1, int a2), (a0, a1, a2))
RIVET_ON_USE(int, X509_NAME_print_ex, (BIO* a0, const X509_NAME* a1, int a2, unsigned long a3), (a0, a1, a2, a3))
RIVET_ON_USE(int, X509_check_issued, (X509* a0, X509* a1), (a0, a1))
RIVET_ON_USE(int, X509_check_private_key, (const X509* a0, const EVP_PKEY* a1), (a0, a1))
RIVET_ON_USE(int, X509_cmp_current_time, (const ASN1_TIME* a0), (a0))
RIVET_ON_USE(void, X509_free, (X509* a0), (a0))
RIVET_ON_USE(const ASN1_TIME*, X509_get0_notAfter, (const X509* a0), (a0))
RIVET_ON_USE(const ASN1_TIME*, X509_get0_notBefore, (const X509* a0), (a0))
RIVET_ON_USE(void*, X509_get_ext_d2i, (const X509* a0, int a1, int* a2, int* a3), (a0, a1, a2, a3))
RIVET_ON_USE(X509_NAME*, X509_get_subject_name, (const X509* a0), (a0))
// clang-format on
