// Loading and checking certificate/key pairs: Context::load() refuses what check() reports.
#include "tls/certificate.hpp"

#include <gtest/gtest.h>

#include <stdexcept>

#include "test_certificates.hpp"
#include "tls/context.hpp"

using namespace rivet::tls;
using rivet::tls::testing::test_certificates;

namespace {

Settings with(std::vector<CertificateFiles> certs) {
    Settings s;
    s.certificates = std::move(certs);
    return s;
}

// The message load() throws, or "" when it loads.
std::string load_error(const Settings& s) {
    try {
        Context::load(s);
        return "";
    } catch (const std::runtime_error& e) {
        return e.what();
    }
}

// The one problem check() reports; fails the test when there are none or several.
std::string only_problem(const Settings& s) {
    auto problems = check(s);
    EXPECT_EQ(problems.size(), 1u) << ::testing::PrintToString(problems);
    return problems.empty() ? "" : problems.front();
}

}  // namespace

TEST(TlsCertificate, GoodPairsLoadAndDescribeThemselves) {
    const auto& t = test_certificates();
    Settings s = with({t.localhost, t.other, t.cn_only});
    EXPECT_TRUE(check(s).empty()) << ::testing::PrintToString(check(s));
    auto context = Context::load(s);
    ASSERT_NE(context->default_ctx(), nullptr);
    ASSERT_NE(context->ticket_keys(), nullptr);
    EXPECT_EQ(context->settings().certificates.size(), 3u);
    auto lines = context->describe();
    ASSERT_EQ(lines.size(), 3u);
    EXPECT_TRUE(lines[0].starts_with(t.localhost.cert_file + ": localhost (expires 2")) << lines[0];
    EXPECT_TRUE(lines[1].starts_with(t.other.cert_file + ": other.test, *.wild.test (expires "))
        << lines[1];
    // No subjectAltName: the CN is the name.
    EXPECT_TRUE(lines[2].starts_with(t.cn_only.cert_file + ": cn.test (expires ")) << lines[2];
    EXPECT_EQ(lines[0].size(), t.localhost.cert_file.size() + 32);  // "...(expires YYYY-MM-DD)"
}

TEST(TlsCertificate, NoCertificates) {
    EXPECT_EQ(only_problem(Settings{}), "tls: no certificates");
    EXPECT_EQ(load_error(Settings{}), "tls: no certificates");
}

TEST(TlsCertificate, UnreadableFiles) {
    const auto& t = test_certificates();
    std::string p = only_problem(with({{t.missing, t.localhost.key_file}}));
    EXPECT_EQ(p, t.missing + ": cannot read the certificate file: No such file or directory");
    p = only_problem(with({{t.localhost.cert_file, t.missing}}));
    EXPECT_EQ(p, t.missing + ": cannot read the key file: No such file or directory");
    EXPECT_EQ(load_error(with({{t.missing, t.localhost.key_file}})),
              t.missing + ": cannot read the certificate file: No such file or directory");
}

TEST(TlsCertificate, NotPem) {
    const auto& t = test_certificates();
    std::string p = only_problem(with({{t.not_pem, t.localhost.key_file}}));
    EXPECT_NE(p.find(t.not_pem + ": no PEM certificate in it"), std::string::npos) << p;
    p = only_problem(with({{t.localhost.cert_file, t.not_pem}}));
    EXPECT_NE(p.find(t.not_pem + ": no PEM private key in it"), std::string::npos) << p;
    // A certificate file given as the key, and the other way round.
    p = only_problem(with({{t.localhost.key_file, t.localhost.cert_file}}));
    EXPECT_NE(p.find("no PEM certificate"), std::string::npos) << p;
}

TEST(TlsCertificate, KeyDoesNotMatch) {
    const auto& t = test_certificates();
    std::string p = only_problem(with({t.mismatched}));
    EXPECT_EQ(p, t.mismatched.key_file + ": the key does not match the certificate in " +
                     t.mismatched.cert_file);
    EXPECT_EQ(load_error(with({t.mismatched})), p);
}

TEST(TlsCertificate, ChainOutOfOrder) {
    const auto& t = test_certificates();
    // The intermediate first: said as an order problem, not as a key that does not match.
    std::string p = only_problem(with({t.out_of_order}));
    EXPECT_EQ(p, t.out_of_order.cert_file +
                     ": chain out of order: certificate 1 (CN=rivet test intermediate) is not "
                     "issued by certificate 2 (CN=localhost); put the server's certificate first, "
                     "then each one's issuer");
    EXPECT_EQ(load_error(with({t.out_of_order})), p);
}

TEST(TlsCertificate, ExpiredIsRefusedUnlessForced) {
    const auto& t = test_certificates();
    Settings s = with({t.expired});
    std::string p = only_problem(s);
    EXPECT_EQ(p.find(t.expired.cert_file + ": the certificate expired on 20"), 0u) << p;
    EXPECT_NE(p.find("tls.allow_expired / --tls-allow-expired"), std::string::npos) << p;
    EXPECT_EQ(load_error(s), p);
    s.allow_expired = true;
    EXPECT_TRUE(check(s).empty());
    auto context = Context::load(s);
    EXPECT_EQ(context->describe().size(), 1u);
}

TEST(TlsCertificate, NotYetValid) {
    const auto& t = test_certificates();
    Settings s = with({t.not_yet});
    std::string p = only_problem(s);
    EXPECT_EQ(p.find(t.not_yet.cert_file + ": the certificate is not valid before 20"), 0u) << p;
    s.allow_expired = true;
    EXPECT_TRUE(check(s).empty());
}

TEST(TlsCertificate, InvalidCipherList) {
    const auto& t = test_certificates();
    Settings s = with({t.localhost});
    s.ciphers = "NO-SUCH-CIPHER";
    std::string p = only_problem(s);
    EXPECT_EQ(p, "tls.ciphers \"NO-SUCH-CIPHER\": OpenSSL knows no cipher in this list");
    EXPECT_EQ(load_error(s), p);
}

TEST(TlsCertificate, AlpnNamesAreBounded) {
    const auto& t = test_certificates();
    Settings s = with({t.localhost});
    s.alpn = {std::string(255, 'a')};
    EXPECT_TRUE(check(s).empty());
    s.alpn = {std::string(256, 'a')};
    EXPECT_EQ(only_problem(s).find("tls: an ALPN protocol name must be 1 to 255 bytes"), 0u);
    s.alpn = {""};
    EXPECT_NE(load_error(s), "");
}

TEST(TlsCertificate, CheckReportsEveryProblemLoadTheFirst) {
    const auto& t = test_certificates();
    Settings s = with({t.localhost, t.mismatched, t.expired, {t.missing, t.missing}});
    s.ciphers = "NOPE";
    auto problems = check(s);
    ASSERT_EQ(problems.size(), 4u) << ::testing::PrintToString(problems);
    EXPECT_NE(problems[0].find("tls.ciphers"), std::string::npos);
    EXPECT_NE(problems[1].find("does not match"), std::string::npos);
    EXPECT_NE(problems[2].find("expired on"), std::string::npos);
    EXPECT_NE(problems[3].find("cannot read"), std::string::npos);
    EXPECT_EQ(load_error(s), problems[0]);
}

TEST(TlsCertificate, NameMatching) {
    EXPECT_TRUE(name_matches("localhost", "LocalHost"));
    EXPECT_FALSE(name_matches("localhost", "localhost."));
    EXPECT_TRUE(name_matches("*.example.com", "a.example.com"));
    EXPECT_TRUE(name_matches("*.example.com", "A.EXAMPLE.com"));
    EXPECT_FALSE(name_matches("*.example.com", "example.com"));
    EXPECT_FALSE(name_matches("*.example.com", "a.b.example.com"));
    EXPECT_FALSE(name_matches("*.example.com", ".example.com"));
    EXPECT_FALSE(name_matches("*.example.com", "aexample.com"));
    EXPECT_FALSE(name_matches("a.example.com", "b.example.com"));
}
