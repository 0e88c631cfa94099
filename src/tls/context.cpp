#include "tls/context.hpp"

#include <openssl/core_names.h>
#include <openssl/err.h>
#include <openssl/evp.h>
#include <openssl/rand.h>
#include <openssl/ssl.h>

#include <algorithm>
#include <cstring>
#include <stdexcept>

#include "tls/certificate.hpp"
#include "tls/ticket_keys.hpp"

namespace rivet::tls {

namespace {

// Mozilla's "intermediate" TLS 1.2 suites: ECDHE (forward secret) with AEAD only.
constexpr const char* kDefaultCiphers =
    "ECDHE-ECDSA-AES128-GCM-SHA256:ECDHE-RSA-AES128-GCM-SHA256:"
    "ECDHE-ECDSA-AES256-GCM-SHA384:ECDHE-RSA-AES256-GCM-SHA384:"
    "ECDHE-ECDSA-CHACHA20-POLY1305:ECDHE-RSA-CHACHA20-POLY1305";
constexpr const char* kGroups = "X25519:P-256:P-384";
// The same on every SSL_CTX of every Context: a session (cached or in a ticket) is bound to it,
// and must still resume after the SNI callback moved the connection to another certificate, and
// after a reload.
constexpr unsigned char kSessionIdContext[] = "rivet-tls";
// Sessions (cached or in tickets) live at least as long as nginx's default, 5 minutes.
constexpr long kMinSessionTimeoutS = 300;

std::string openssl_error() {
    unsigned long e = ERR_get_error();
    ERR_clear_error();
    if (!e) return "unknown OpenSSL error";
    char buf[256];
    ERR_error_string_n(e, buf, sizeof buf);
    return buf;
}

struct SslCtxFree {
    void operator()(SSL_CTX* c) const { SSL_CTX_free(c); }
};
using SslCtxPtr = std::unique_ptr<SSL_CTX, SslCtxFree>;

// The protocol profile every SSL_CTX gets; false (with `why`) when the cipher list is refused.
bool set_profile(SSL_CTX* ctx, const Settings& s, std::string& why) {
    int floor = s.min_version == Version::Tls13 ? TLS1_3_VERSION : TLS1_2_VERSION;
    SSL_CTX_set_min_proto_version(ctx, floor);
    SSL_CTX_set_max_proto_version(ctx, TLS1_3_VERSION);
    uint64_t options =
        SSL_OP_NO_RENEGOTIATION | SSL_OP_NO_COMPRESSION | SSL_OP_CIPHER_SERVER_PREFERENCE;
    // OpenSSL 3 already refuses a client's renegotiation unless SSL_OP_ALLOW_CLIENT_RENEGOTIATION;
    // NO_RENEGOTIATION says so whatever the version or configuration, and for both directions.
#ifdef SSL_OP_NO_CLIENT_RENEGOTIATION
    options |= SSL_OP_NO_CLIENT_RENEGOTIATION;
#endif
    if (s.ticket_key_lifetime_s == 0) options |= SSL_OP_NO_TICKET;
    SSL_CTX_set_options(ctx, options);
    SSL_CTX_set_mode(ctx, SSL_MODE_RELEASE_BUFFERS);
    const std::string& list = s.ciphers.empty() ? std::string(kDefaultCiphers) : s.ciphers;
    if (SSL_CTX_set_cipher_list(ctx, list.c_str()) != 1) {
        ERR_clear_error();
        why = "tls.ciphers \"" + s.ciphers + "\": OpenSSL knows no cipher in this list";
        return false;
    }
    if (SSL_CTX_set1_groups_list(ctx, kGroups) != 1) {
        why = std::string("TLS: OpenSSL refuses the groups ") + kGroups + ": " + openssl_error();
        return false;
    }
    return true;
}

// Problems of the settings themselves (not of their files).
void check_settings(const Settings& s, std::vector<std::string>& problems) {
    if (s.certificates.empty()) problems.push_back("tls: no certificates");
    for (const std::string& p : s.alpn)
        if (p.empty() || p.size() > 255)
            problems.push_back("tls: an ALPN protocol name must be 1 to 255 bytes: \"" + p + "\"");
    SslCtxPtr probe(SSL_CTX_new(TLS_server_method()));
    std::string why;
    if (!probe)
        problems.push_back("TLS: " + openssl_error());
    else if (!set_profile(probe.get(), s, why))
        problems.push_back(why);
}

// What the OpenSSL callbacks reach through their arg or the SSL_CTX's app data (Context::Impl
// is private to Context, so they know it by this name).
struct State {
    struct Entry {
        SslCtxPtr ctx;
        std::string cert_file;
        std::vector<std::string> names;
        std::string expires;
        int64_t not_after_s = 0;
    };
    Settings settings;
    std::shared_ptr<TicketKeys> keys;
    std::vector<Entry> entries;
    std::string alpn_wire;  // settings.alpn as ALPN's wire list: length byte, name, ...
    EVP_CIPHER* ticket_cipher = nullptr;  // fetched once, not at every ticket

    State() = default;
    State(const State&) = delete;
    State& operator=(const State&) = delete;
    ~State() { EVP_CIPHER_free(ticket_cipher); }

    static State* of(SSL* ssl) {
        return static_cast<State*>(SSL_CTX_get_app_data(SSL_get_SSL_CTX(ssl)));
    }
    SSL_CTX* for_host(std::string_view host) const;
};

SSL_CTX* State::for_host(std::string_view host) const {
    // An exact name first, so "api.example.com" wins over another certificate's "*.example.com".
    for (const Entry& e : entries)
        for (const std::string& n : e.names)
            if (!n.starts_with("*.") && name_matches(n, host)) return e.ctx.get();
    for (const Entry& e : entries)
        for (const std::string& n : e.names)
            if (n.starts_with("*.") && name_matches(n, host)) return e.ctx.get();
    return entries.front().ctx.get();
}

// SNI: moves the connection to the certificate that names the host; an unknown or absent name
// stays on the default (the first).
int on_server_name(SSL* ssl, int*, void* arg) {
    const char* host = SSL_get_servername(ssl, TLSEXT_NAMETYPE_host_name);
    if (!host) return SSL_TLSEXT_ERR_OK;
    SSL_CTX* chosen = static_cast<const State*>(arg)->for_host(host);
    if (chosen != SSL_get_SSL_CTX(ssl)) SSL_set_SSL_CTX(ssl, chosen);
    return SSL_TLSEXT_ERR_OK;
}

// ALPN: the first of the server's protocols the client offers; none in common fails the
// handshake with no_application_protocol (RFC 7301); a client that offers none never gets here.
int on_alpn(SSL*, const unsigned char** out, unsigned char* outlen, const unsigned char* in,
            unsigned int inlen, void* arg) {
    const std::string& ours = *static_cast<const std::string*>(arg);
    for (size_t i = 0; i < ours.size(); i += 1 + size_t(uint8_t(ours[i]))) {
        auto len = uint8_t(ours[i]);
        for (unsigned j = 0; j < inlen; j += 1 + unsigned(in[j])) {
            if (in[j] == len && j + 1 + len <= inlen &&
                std::memcmp(in + j + 1, ours.data() + i + 1, len) == 0) {
                *out = in + j + 1;
                *outlen = len;
                return SSL_TLSEXT_ERR_OK;
            }
        }
    }
    return SSL_TLSEXT_ERR_ALERT_FATAL;
}

bool set_mac_key(EVP_MAC_CTX* mac, const TicketKey& key) {
    OSSL_PARAM params[] = {
        OSSL_PARAM_construct_octet_string(OSSL_MAC_PARAM_KEY, const_cast<uint8_t*>(key.hmac_key),
                                          sizeof key.hmac_key),
        OSSL_PARAM_construct_utf8_string(OSSL_MAC_PARAM_DIGEST, const_cast<char*>("SHA256"), 0),
        OSSL_PARAM_construct_end()};
    return EVP_MAC_CTX_set_params(mac, params) == 1;
}

// Session tickets, sealed and opened with the shared TicketKeys. OpenSSL calls this from the
// session context (the default certificate's SSL_CTX) on every loop thread at once.
// Returns: 1 ok, 2 ok but renew the ticket (the previous key opened it), 0 unknown key (a full
// handshake), -1 failure.
int on_ticket(SSL* ssl, unsigned char* name, unsigned char* iv, EVP_CIPHER_CTX* cipher,
              EVP_MAC_CTX* mac, int enc) {
    State* impl = State::of(ssl);
    if (!impl) return -1;
    if (enc) {
        TicketKey key = impl->keys->current();
        std::memcpy(name, key.name, sizeof key.name);
        int iv_len = EVP_CIPHER_get_iv_length(impl->ticket_cipher);
        if (RAND_bytes(iv, iv_len) != 1) return -1;
        if (EVP_EncryptInit_ex(cipher, impl->ticket_cipher, nullptr, key.aes_key, iv) != 1)
            return -1;
        return set_mac_key(mac, key) ? 1 : -1;
    }
    uint8_t wanted[16];
    std::memcpy(wanted, name, sizeof wanted);
    auto found = impl->keys->find(wanted);
    if (!found) return 0;
    if (EVP_DecryptInit_ex(cipher, impl->ticket_cipher, nullptr, found->key.aes_key, iv) != 1)
        return -1;
    if (!set_mac_key(mac, found->key)) return -1;
    // 2 asks for a new ticket. A TLS 1.3 ticket is used once (RFC 8446 §C.4), so a client
    // that offers each connection the session of the one before (wrk, s_client -sess_in)
    // resumes every time only if each resumption brings a new one; a TLS 1.2 ticket may be
    // offered again and is renewed only when an older key opened it.
    const bool renew =
        found->match == TicketKeys::Match::Previous || SSL_version(ssl) == TLS1_3_VERSION;
    return renew ? 2 : 1;
}

}  // namespace

struct Context::Impl : State {};

Context::Context() : impl_(std::make_unique<Impl>()) {}
Context::~Context() = default;

std::shared_ptr<const Context> Context::load(const Settings& settings,
                                             std::shared_ptr<TicketKeys> keys) {
    std::vector<std::string> problems;
    check_settings(settings, problems);
    std::vector<Certificate> certs;
    for (const CertificateFiles& files : settings.certificates)
        if (auto c = read_certificate(files, settings.allow_expired, problems))
            certs.push_back(std::move(*c));
    if (!problems.empty()) throw std::runtime_error(problems.front());

    std::shared_ptr<Context> context(new Context());
    Impl& impl = *context->impl_;
    impl.settings = settings;
    if (!settings.ticket_key_file.empty())
        keys = std::make_shared<TicketKeys>(read_ticket_key_file(settings.ticket_key_file));
    else if (keys && keys->rotation() == TicketKeys::Rotation::Timed)
        keys->set_lifetime(settings.ticket_key_lifetime_s);
    else  // first, or the file was dropped: its keys no longer say who may resume
        keys = std::make_shared<TicketKeys>(settings.ticket_key_lifetime_s);
    impl.keys = std::move(keys);
    for (const std::string& p : settings.alpn) impl.alpn_wire += char(p.size()) + p;
    impl.ticket_cipher = EVP_CIPHER_fetch(nullptr, "AES-256-CBC", nullptr);
    if (!impl.ticket_cipher) throw std::runtime_error("TLS: no AES-256-CBC: " + openssl_error());

    bool tickets = settings.ticket_key_lifetime_s > 0;
    bool cache = settings.session_cache_size > 0;
    long timeout = std::max<long>(
        kMinSessionTimeoutS, long(std::min<uint64_t>(settings.ticket_key_lifetime_s, 1 << 30)));
    for (Certificate& c : certs) {
        SslCtxPtr ctx(SSL_CTX_new(TLS_server_method()));
        std::string why;
        if (!ctx) throw std::runtime_error("TLS: " + openssl_error());
        if (!set_profile(ctx.get(), settings, why)) throw std::runtime_error(why);
        if (SSL_CTX_use_certificate(ctx.get(), c.chain[0].get()) != 1 ||
            SSL_CTX_use_PrivateKey(ctx.get(), c.key.get()) != 1)
            throw std::runtime_error(c.cert_file + ": " + openssl_error());
        for (size_t i = 1; i < c.chain.size(); ++i)
            if (SSL_CTX_add1_chain_cert(ctx.get(), c.chain[i].get()) != 1)
                throw std::runtime_error(c.cert_file + ": " + openssl_error());
        SSL_CTX_set_app_data(ctx.get(), static_cast<State*>(&impl));
        SSL_CTX_set_tlsext_servername_callback(ctx.get(), on_server_name);
        SSL_CTX_set_tlsext_servername_arg(ctx.get(), static_cast<State*>(&impl));
        if (!impl.alpn_wire.empty())
            SSL_CTX_set_alpn_select_cb(ctx.get(), on_alpn, &impl.alpn_wire);
        SSL_CTX_set_session_id_context(ctx.get(), kSessionIdContext, sizeof kSessionIdContext - 1);
        SSL_CTX_set_timeout(ctx.get(), timeout);
        // OpenSSL resumes against the SSL_CTX a connection started on (its session context,
        // the default certificate's): its cache and ticket callback serve every certificate.
        // Each SSL_CTX gets them all the same, so which one OpenSSL asks never matters.
        SSL_CTX_set_session_cache_mode(ctx.get(),
                                       cache ? SSL_SESS_CACHE_SERVER : SSL_SESS_CACHE_OFF);
        // OpenSSL reads a cache size of 0 as "unlimited".
        if (cache) SSL_CTX_sess_set_cache_size(ctx.get(), long(settings.session_cache_size));
        if (tickets) SSL_CTX_set_tlsext_ticket_key_evp_cb(ctx.get(), on_ticket);
        // TLS 1.3 sends its tickets after the handshake; OpenSSL's default is 2. Clients resume
        // from the newest one they hold (curl, Go, Python each keep one per host), so a second
        // ticket is a seal and a record per full handshake that is never used; each resumption
        // brings a new one (on_ticket). With neither
        // tickets nor cache there is nothing to resume: none.
        SSL_CTX_set_num_tickets(ctx.get(), tickets || cache ? 1 : 0);
        impl.entries.push_back(
            {std::move(ctx), c.cert_file, std::move(c.names), c.expires, c.not_after_s});
    }
    return context;
}

ssl_ctx_st* Context::default_ctx() const {
    return impl_->entries.front().ctx.get();
}
const std::shared_ptr<TicketKeys>& Context::ticket_keys() const {
    return impl_->keys;
}
const Settings& Context::settings() const {
    return impl_->settings;
}

std::vector<std::string> Context::describe() const {
    std::vector<std::string> lines;
    for (const State::Entry& e : impl_->entries) {
        std::string line = e.cert_file + ": ";
        if (e.names.empty()) line += "(no DNS names)";
        for (size_t i = 0; i < e.names.size(); ++i) line += (i ? ", " : "") + e.names[i];
        lines.push_back(line + " (expires " + e.expires + ")");
    }
    return lines;
}

std::vector<Context::Expiry> Context::expiries() const {
    std::vector<Expiry> out;
    for (const State::Entry& e : impl_->entries) out.push_back({e.cert_file, e.not_after_s});
    return out;
}

std::vector<std::string> check(const Settings& settings) {
    std::vector<std::string> problems;
    try {
        check_settings(settings, problems);
        for (const CertificateFiles& files : settings.certificates)
            read_certificate(files, settings.allow_expired, problems);
    } catch (const std::exception& e) {
        problems.push_back(std::string("TLS: ") + e.what());
    }
    try {
        if (!settings.ticket_key_file.empty()) read_ticket_key_file(settings.ticket_key_file);
    } catch (const std::exception& e) {
        problems.push_back(e.what());  // names the file already
    }
    return problems;
}

}  // namespace rivet::tls
