#include "handshake.hpp"

#include <openssl/err.h>
#include <openssl/x509.h>

#include "test_certificates.hpp"

namespace rivet::tls::testing {

namespace {

std::string drain_errors() {
    std::string text;
    while (unsigned long e = ERR_get_error()) {
        char buf[256];
        ERR_error_string_n(e, buf, sizeof buf);
        text += (text.empty() ? "" : "; ") + std::string(buf);
    }
    return text;
}

// Counts the sessions the server gives the client (the Handshake is the SSL's app data).
int on_new_session(SSL* ssl, SSL_SESSION*) {
    static_cast<Handshake*>(SSL_get_app_data(ssl))->sessions_sent++;
    return 0;  // not kept: Handshake::session is taken at the end
}

// One step of one side: true when it finished or waits for the other; false (with the error)
// when it failed.
bool step(SSL* ssl, bool& done, std::string& error) {
    if (done) return true;
    int r = SSL_do_handshake(ssl);
    if (r == 1) {
        done = true;
        return true;
    }
    int e = SSL_get_error(ssl, r);
    if (e == SSL_ERROR_WANT_READ || e == SSL_ERROR_WANT_WRITE) return true;
    error = drain_errors();
    if (error.empty()) error = "SSL error " + std::to_string(e);
    return false;
}

std::string common_name(X509* cert) {
    char buf[256] = {};
    X509_NAME_get_text_by_NID(X509_get_subject_name(cert), NID_commonName, buf, sizeof buf);
    return buf;
}

}  // namespace

Handshake handshake(const Context& context, const Client& c) {
    Handshake h;
    ERR_clear_error();
    std::unique_ptr<SSL_CTX, decltype(&SSL_CTX_free)> cctx(SSL_CTX_new(TLS_client_method()),
                                                           SSL_CTX_free);
    // The client's own floor would hide the server's: let it offer TLS 1.0 and 1.1 too.
    SSL_CTX_set_security_level(cctx.get(), 0);
    SSL_CTX_set_min_proto_version(cctx.get(), c.min_version ? c.min_version : TLS1_VERSION);
    if (c.max_version) SSL_CTX_set_max_proto_version(cctx.get(), c.max_version);
    if (!c.ciphers.empty()) SSL_CTX_set_cipher_list(cctx.get(), c.ciphers.c_str());
    if (!c.groups.empty()) SSL_CTX_set1_groups_list(cctx.get(), c.groups.c_str());
    SSL_CTX_set_session_cache_mode(cctx.get(), SSL_SESS_CACHE_CLIENT | SSL_SESS_CACHE_NO_INTERNAL);
    SSL_CTX_sess_set_new_cb(cctx.get(), on_new_session);
    if (c.verify) {
        SSL_CTX_load_verify_locations(cctx.get(), test_certificates().ca_file.c_str(), nullptr);
        SSL_CTX_set_verify(cctx.get(), SSL_VERIFY_PEER, nullptr);
    }
    std::unique_ptr<SSL, decltype(&SSL_free)> client(SSL_new(cctx.get()), SSL_free);
    std::unique_ptr<SSL, decltype(&SSL_free)> server(SSL_new(context.default_ctx()), SSL_free);
    SSL_set_app_data(client.get(), &h);
    SSL_set_connect_state(client.get());
    SSL_set_accept_state(server.get());
    if (!c.sni.empty()) {
        SSL_set_tlsext_host_name(client.get(), c.sni.c_str());
        if (c.verify) SSL_set1_host(client.get(), c.sni.c_str());
    }
    if (!c.alpn.empty()) {
        std::string wire;
        for (const std::string& p : c.alpn) wire += char(p.size()) + p;
        SSL_set_alpn_protos(client.get(), reinterpret_cast<const unsigned char*>(wire.data()),
                            unsigned(wire.size()));
    }
    if (c.resume) SSL_set_session(client.get(), c.resume);
    BIO *cb = nullptr, *sb = nullptr;
    BIO_new_bio_pair(&cb, 0, &sb, 0);
    SSL_set_bio(client.get(), cb, cb);
    SSL_set_bio(server.get(), sb, sb);

    bool client_done = false, server_done = false;
    for (int round = 0; round < 50 && !(client_done && server_done); ++round) {
        bool c_ok = step(client.get(), client_done, h.client_error);
        bool s_ok = step(server.get(), server_done, h.server_error);
        if (!c_ok || !s_ok) {
            // Let the side still running read the alert the failing one sent.
            if (c_ok) step(client.get(), client_done, h.client_error);
            if (s_ok) step(server.get(), server_done, h.server_error);
            return h;
        }
    }
    if (!(client_done && server_done)) return h;
    // TLS 1.3 tickets come after the handshake: the client takes them when it reads.
    char byte;
    SSL_read(client.get(), &byte, 1);
    ERR_clear_error();

    h.ok = true;
    if (X509* peer = SSL_get1_peer_certificate(client.get())) {
        h.peer_cn = common_name(peer);
        X509_free(peer);
    }
    const unsigned char* alpn = nullptr;
    unsigned alpn_len = 0;
    SSL_get0_alpn_selected(client.get(), &alpn, &alpn_len);
    if (alpn) h.alpn.assign(reinterpret_cast<const char*>(alpn), alpn_len);
    h.version = SSL_get_version(server.get());
    h.cipher = SSL_get_cipher_name(server.get());
    h.reused = SSL_session_reused(server.get()) == 1;
    h.session.reset(SSL_get1_session(client.get()));
    h.has_ticket = h.session && SSL_SESSION_has_ticket(h.session.get());
    if (c.renegotiate && SSL_renegotiate(client.get()) == 1) {
        char buf[16];
        for (int round = 0; round < 10; ++round) {
            SSL_do_handshake(client.get());
            SSL_read(server.get(), buf, sizeof buf);  // where a server meets a renegotiation
        }
        h.renegotiated = SSL_renegotiate_pending(client.get()) == 0;
        h.client_error = drain_errors();
    }
    // A clean close on both sides: OpenSSL takes an SSL freed without one for a broken
    // connection and marks its session not resumable (and drops it from the server's cache).
    SSL_shutdown(client.get());
    SSL_shutdown(server.get());
    ERR_clear_error();
    return h;
}

}  // namespace rivet::tls::testing
