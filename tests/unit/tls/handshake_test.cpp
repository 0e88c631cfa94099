// Real handshakes in memory against a Context: SNI, protocol floor, ciphers, ALPN.
#include "handshake.hpp"

#include <gtest/gtest.h>

#include "test_certificates.hpp"

using namespace rivet::tls;
using namespace rivet::tls::testing;

namespace {

std::shared_ptr<const Context> two_hosts(Settings s = {}) {
    const auto& t = test_certificates();
    s.certificates = {t.localhost, t.other};
    return Context::load(s);
}

// The CN of the certificate the client got, or why the handshake failed.
std::string served(const Context& context, const Client& client) {
    Handshake h = handshake(context, client);
    return h.ok ? h.peer_cn : "failed: " + h.client_error + " / " + h.server_error;
}

}  // namespace

TEST(TlsHandshake, DefaultCertificateWithItsChain) {
    auto context = two_hosts();
    // No SNI: the first certificate. The client verifies it against the root alone, so the
    // intermediate came with it.
    Handshake h = handshake(*context);
    ASSERT_TRUE(h.ok) << h.client_error << " / " << h.server_error;
    EXPECT_EQ(h.peer_cn, "localhost");
    EXPECT_EQ(h.version, "TLSv1.3");
    EXPECT_FALSE(h.reused);
}

TEST(TlsHandshake, SniChoosesTheCertificate) {
    auto context = two_hosts();
    EXPECT_EQ(served(*context, {.sni = "other.test"}), "other.test");
    EXPECT_EQ(served(*context, {.sni = "OTHER.Test"}), "other.test");
    EXPECT_EQ(served(*context, {.sni = "localhost"}), "localhost");
    // The wildcard covers one label.
    EXPECT_EQ(served(*context, {.sni = "api.wild.test"}), "other.test");
    // Unknown names, and two labels under the wildcard: the default (which the client, checking
    // the name, would refuse; so these do not verify).
    EXPECT_EQ(served(*context, {.sni = "a.b.wild.test", .verify = false}), "localhost");
    EXPECT_EQ(served(*context, {.sni = "unknown.test", .verify = false}), "localhost");
    // Over TLS 1.2 as well.
    EXPECT_EQ(served(*context, {.sni = "other.test", .max_version = TLS1_2_VERSION}), "other.test");
}

TEST(TlsHandshake, AnExactNameWinsOverAWildcard) {
    const auto& t = test_certificates();
    Settings s;
    s.certificates = {t.localhost, t.other, t.api_wild};  // the wildcard comes first
    auto context = Context::load(s);
    EXPECT_EQ(served(*context, {.sni = "api.wild.test"}), "api.wild.test");
    EXPECT_EQ(served(*context, {.sni = "www.wild.test"}), "other.test");
}

TEST(TlsHandshake, DefaultFirstOrderDecides) {
    const auto& t = test_certificates();
    Settings s;
    s.certificates = {t.other, t.localhost};
    auto context = Context::load(s);
    EXPECT_EQ(served(*context, {.verify = false}), "other.test");
    EXPECT_EQ(served(*context, {.sni = "localhost"}), "localhost");
}

TEST(TlsHandshake, OldProtocolsAreRefused) {
    auto context = two_hosts();
    for (int version : {TLS1_VERSION, TLS1_1_VERSION}) {
        Handshake h = handshake(*context, {.max_version = version, .ciphers = "ALL:@SECLEVEL=0"});
        EXPECT_FALSE(h.ok) << version;
        EXPECT_NE(h.server_error.find("unsupported protocol"), std::string::npos) << h.server_error;
    }
    Handshake h = handshake(*context, {.max_version = TLS1_2_VERSION});
    ASSERT_TRUE(h.ok) << h.client_error;
    EXPECT_EQ(h.version, "TLSv1.2");
}

TEST(TlsHandshake, MinimumTls13RefusesTls12) {
    Settings s;
    s.min_version = Version::Tls13;
    auto context = two_hosts(s);
    Handshake h = handshake(*context, {.max_version = TLS1_2_VERSION});
    EXPECT_FALSE(h.ok);
    EXPECT_NE(h.server_error.find("unsupported protocol"), std::string::npos) << h.server_error;
    h = handshake(*context);
    ASSERT_TRUE(h.ok) << h.client_error;
    EXPECT_EQ(h.version, "TLSv1.3");
}

TEST(TlsHandshake, ModernTls12SuitesOnly) {
    auto context = two_hosts();
    // A client that offers only RSA key exchange (no forward secrecy) or CBC finds nothing.
    Handshake h = handshake(*context, {.max_version = TLS1_2_VERSION,
                                       .ciphers = "AES128-GCM-SHA256:ECDHE-ECDSA-AES128-SHA"});
    EXPECT_FALSE(h.ok);
    EXPECT_NE(h.server_error.find("no shared cipher"), std::string::npos) << h.server_error;
    // The server's preference wins over the client's order.
    h = handshake(*context,
                  {.max_version = TLS1_2_VERSION,
                   .ciphers = "ECDHE-ECDSA-AES256-GCM-SHA384:ECDHE-ECDSA-AES128-GCM-SHA256"});
    ASSERT_TRUE(h.ok) << h.client_error;
    EXPECT_EQ(h.cipher, "ECDHE-ECDSA-AES128-GCM-SHA256");
}

TEST(TlsHandshake, CipherListFromSettings) {
    Settings s;
    s.ciphers = "ECDHE-ECDSA-CHACHA20-POLY1305";
    auto context = two_hosts(s);
    Handshake h = handshake(*context, {.max_version = TLS1_2_VERSION});
    ASSERT_TRUE(h.ok) << h.client_error;
    EXPECT_EQ(h.cipher, "ECDHE-ECDSA-CHACHA20-POLY1305");
}

TEST(TlsHandshake, Alpn) {
    auto context = two_hosts();
    Handshake h = handshake(*context, {.alpn = {"h2", "http/1.1"}});
    ASSERT_TRUE(h.ok) << h.client_error;
    EXPECT_EQ(h.alpn, "http/1.1");
    // Nothing in common: no_application_protocol.
    h = handshake(*context, {.alpn = {"h2"}});
    EXPECT_FALSE(h.ok);
    EXPECT_NE(h.client_error.find("no application protocol"), std::string::npos) << h.client_error;
    // No ALPN offered: fine, none chosen.
    h = handshake(*context);
    ASSERT_TRUE(h.ok) << h.client_error;
    EXPECT_EQ(h.alpn, "");
}

TEST(TlsHandshake, AlpnInTheServersOrder) {
    Settings s;
    s.alpn = {"h2", "http/1.1"};
    auto context = two_hosts(s);
    Handshake h = handshake(*context, {.alpn = {"http/1.1", "h2"}});
    ASSERT_TRUE(h.ok) << h.client_error;
    EXPECT_EQ(h.alpn, "h2");
    h = handshake(*context, {.max_version = TLS1_2_VERSION, .alpn = {"spdy/3", "http/1.1"}});
    ASSERT_TRUE(h.ok) << h.client_error;
    EXPECT_EQ(h.alpn, "http/1.1");
}

TEST(TlsHandshake, RenegotiationIsRefused) {
    auto context = two_hosts();
    Handshake h = handshake(*context, {.max_version = TLS1_2_VERSION, .renegotiate = true});
    ASSERT_TRUE(h.ok);
    EXPECT_FALSE(h.renegotiated);
    EXPECT_NE(h.client_error.find("no renegotiation"), std::string::npos) << h.client_error;
}

TEST(TlsHandshake, KeyExchangeGroups) {
    auto context = two_hosts();
    // (TLS 1.3 only: in TLS 1.2 the groups also name the curves the client takes for ECDSA
    // certificates, and the test certificates are P-256.)
    Handshake h = handshake(*context, {.groups = "P-384"});
    EXPECT_TRUE(h.ok) << h.client_error;
    for (int version : {TLS1_2_VERSION, TLS1_3_VERSION}) {
        h = handshake(*context, {.max_version = version, .groups = "X448:P-521"});
        EXPECT_FALSE(h.ok) << version;
    }
}

TEST(TlsHandshake, ProfileOnTheContext) {
    auto context = two_hosts();
    SSL_CTX* ctx = context->default_ctx();
    uint64_t options = SSL_CTX_get_options(ctx);
    EXPECT_TRUE(options & SSL_OP_NO_COMPRESSION);
    EXPECT_TRUE(options & SSL_OP_NO_RENEGOTIATION);
    EXPECT_TRUE(options & SSL_OP_CIPHER_SERVER_PREFERENCE);
    EXPECT_FALSE(options & SSL_OP_NO_TICKET);
    EXPECT_TRUE(SSL_CTX_get_mode(ctx) & SSL_MODE_RELEASE_BUFFERS);
    Settings s;
    s.ticket_key_lifetime_s = 0;
    EXPECT_TRUE(SSL_CTX_get_options(two_hosts(s)->default_ctx()) & SSL_OP_NO_TICKET);
}
