// The App's TLS pieces that need no handshake: TlsOptions -> tls::Settings, the redirect's
// Location, the HSTS field. (The TLS metrics and access log fields: metrics_test, access_log_test.)
#include "app/tls_options.hpp"

#include <gtest/gtest.h>

#include <stdexcept>

using namespace rivet::app;

namespace {

rivet::TlsOptions two_certificates() {
    rivet::TlsOptions o;
    o.certificates = {{"a.pem", "a.key"}, {"b.pem", "b.key"}};
    return o;
}

}  // namespace

TEST(TlsOptions, ConvertedFieldByField) {
    rivet::TlsOptions o = two_certificates();
    o.min_version = "1.3";
    o.ciphers = "ECDHE-ECDSA-AES128-GCM-SHA256";
    o.allow_expired = true;
    o.ticket_key_lifetime_s = 0;
    o.session_cache_size = 7;
    rivet::tls::Settings s = tls_settings(o, false);
    ASSERT_EQ(s.certificates.size(), 2u);
    EXPECT_EQ(s.certificates[0].cert_file, "a.pem");
    EXPECT_EQ(s.certificates[0].key_file, "a.key");
    EXPECT_EQ(s.certificates[1].cert_file, "b.pem");
    EXPECT_EQ(s.min_version, rivet::tls::Version::Tls13);
    EXPECT_EQ(s.ciphers, "ECDHE-ECDSA-AES128-GCM-SHA256");
    EXPECT_TRUE(s.allow_expired);
    EXPECT_EQ(s.ticket_key_lifetime_s, 0u);
    EXPECT_EQ(s.session_cache_size, 7u);
    EXPECT_EQ(s.alpn, std::vector<std::string>{"http/1.1"});

    o.min_version = "1.2";
    EXPECT_EQ(tls_settings(o, false).min_version, rivet::tls::Version::Tls12);
}

TEST(TlsOptions, AlpnOffersH2FirstWithHttp2On) {
    rivet::TlsOptions o = two_certificates();
    EXPECT_EQ(tls_settings(o, true).alpn, (std::vector<std::string>{"h2", "http/1.1"}));
    EXPECT_EQ(tls_settings(o, false).alpn, std::vector<std::string>{"http/1.1"});
}

TEST(TlsOptions, BadValuesAreRefused) {
    for (const char* v : {"1.1", "1.0", "", "1.3 ", "TLSv1.3", "1"}) {
        rivet::TlsOptions o = two_certificates();
        o.min_version = v;
        EXPECT_THROW(tls_settings(o, true), std::invalid_argument) << v;
    }
    EXPECT_THROW(tls_settings(rivet::TlsOptions{}, true), std::invalid_argument);  // no certificate
    rivet::TlsOptions no_key = two_certificates();
    no_key.certificates[1].key_file.clear();
    EXPECT_THROW(tls_settings(no_key, true), std::invalid_argument);
    rivet::TlsOptions no_cert = two_certificates();
    no_cert.certificates[0].cert_file.clear();
    try {
        tls_settings(no_cert, true);
        ADD_FAILURE() << "no throw";
    } catch (const std::invalid_argument& e) {
        EXPECT_NE(std::string(e.what()).find("a.key"), std::string::npos) << e.what();
    }
}

TEST(TlsOptions, HstsFieldText) {
    rivet::TlsOptions o;
    EXPECT_EQ(hsts_value(o), "");  // 0: no field
    o.hsts_max_age_s = 31'536'000;
    EXPECT_EQ(hsts_value(o), "max-age=31536000");
    o.hsts_include_subdomains = true;
    EXPECT_EQ(hsts_value(o), "max-age=31536000; includeSubDomains");
    o.hsts_max_age_s = 0;  // includeSubDomains alone says nothing
    EXPECT_EQ(hsts_value(o), "");
}

TEST(HttpsRedirect, LocationFromTheHostFieldsName) {
    EXPECT_EQ(https_location("example.com:8080", "0.0.0.0", 8443, "/a/b", "x=1&y"),
              "https://example.com:8443/a/b?x=1&y");
    EXPECT_EQ(https_location("example.com", "0.0.0.0", 443, "/", ""), "https://example.com/");
    EXPECT_EQ(https_location("[::1]:8080", "::", 8443, "/p", ""), "https://[::1]:8443/p");
    EXPECT_EQ(https_location("Sub.Example-1.org", "::", 4443, "/%20", ""),
              "https://Sub.Example-1.org:4443/%20");
    EXPECT_EQ(https_location("h", "127.0.0.1", 8443, "", ""), "https://h:8443/");  // CONNECT
}

TEST(HttpsRedirect, NoUsableHostTakesTheListeners) {
    EXPECT_EQ(https_location("", "127.0.0.1", 8443, "/x", ""), "https://127.0.0.1:8443/x");
    EXPECT_EQ(https_location("", "::1", 443, "/x", ""), "https://[::1]/x");
    // Characters no host has would move the Location elsewhere: the listener's host instead.
    for (const char* bad :
         {"evil.com/x", "a@evil.com", "evil.com?", "a b", "[::1", "[zz]", "ex\\ample.com", "[]"})
        EXPECT_EQ(https_location(bad, "10.0.0.1", 8443, "/x", ""), "https://10.0.0.1:8443/x")
            << bad;
    EXPECT_EQ(https_location(std::string(300, 'a'), "10.0.0.1", 443, "/", ""), "https://10.0.0.1/");
}

TEST(HttpsRedirect, UrlHost) {
    EXPECT_EQ(url_host("127.0.0.1"), "127.0.0.1");
    EXPECT_EQ(url_host("::"), "[::]");
    EXPECT_EQ(url_host("localhost"), "localhost");
}
