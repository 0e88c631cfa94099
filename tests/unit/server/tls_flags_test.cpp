// The rivet executable's HTTPS flags: each sets its RunOptions field, each bound is crossed, and
// every refusal says what was wrong in one line.
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "server/command_line.hpp"

using rivet::server::CommandLine;
using rivet::server::parse_command_line;

namespace {

// The error of a command line that must be refused.
std::string refusal(const std::vector<std::string>& args) {
    auto cl = parse_command_line(args);
    if (cl.action != CommandLine::Action::Error) return "(accepted)";
    return cl.error;
}

CommandLine accepted(std::vector<std::string> args) {
    auto cl = parse_command_line(args);
    EXPECT_EQ(cl.action, CommandLine::Action::Serve) << cl.error;
    return cl;
}

const std::vector<std::string> kPair = {"--tls-cert", "c.pem", "--tls-key", "k.pem"};

std::vector<std::string> with_pair(std::vector<std::string> args) {
    args.insert(args.begin(), kPair.begin(), kPair.end());
    return args;
}

}  // namespace

TEST(TlsFlags, OffByDefault) {
    auto cl = accepted({});
    EXPECT_TRUE(cl.run.tls.certificates.empty());
    EXPECT_EQ(cl.run.tls.port, 8443);
    EXPECT_EQ(cl.run.timeouts.handshake_ms, 10'000u);
}

TEST(TlsFlags, EachFlagSetsItsOption) {
    auto cl =
        accepted(with_pair({"--tls-port", "9443", "--tls-min-version", "1.3", "--tls-allow-expired",
                            "--redirect-https", "--hsts=31536000", "--handshake-timeout", "2.5"}));
    ASSERT_EQ(cl.run.tls.certificates.size(), 1u);
    EXPECT_EQ(cl.run.tls.certificates[0].cert_file, "c.pem");
    EXPECT_EQ(cl.run.tls.certificates[0].key_file, "k.pem");
    EXPECT_EQ(cl.run.tls.port, 9443);
    EXPECT_EQ(cl.run.tls.min_version, "1.3");
    EXPECT_TRUE(cl.run.tls.allow_expired);
    EXPECT_TRUE(cl.run.tls.redirect_http);
    EXPECT_EQ(cl.run.tls.hsts_max_age_s, 31'536'000u);
    EXPECT_EQ(cl.run.timeouts.handshake_ms, 2'500u);
}

TEST(TlsFlags, BoundsAreInclusive) {
    EXPECT_EQ(accepted(with_pair({"--tls-port", "0"})).run.tls.port, 0);
    EXPECT_EQ(accepted(with_pair({"--tls-port", "65535"})).run.tls.port, 65535);
    EXPECT_EQ(accepted(with_pair({"--tls-min-version", "1.2"})).run.tls.min_version, "1.2");
    EXPECT_EQ(accepted(with_pair({"--hsts", "0"})).run.tls.hsts_max_age_s, 0u);
    EXPECT_EQ(accepted(with_pair({"--hsts", "63072000"})).run.tls.hsts_max_age_s, 63'072'000u);
    EXPECT_EQ(accepted({"--handshake-timeout", "0.001"}).run.timeouts.handshake_ms, 1u);
    EXPECT_EQ(accepted({"--handshake-timeout", "3600"}).run.timeouts.handshake_ms, 3'600'000u);
}

TEST(TlsFlags, BadValuesSayWhatWasExpected) {
    struct Case {
        std::vector<std::string> args;
        std::string says;
    } cases[] = {
        {{"--tls-port", "65536"},
         "invalid value '65536' for --tls-port: expected a port from 0 "
         "to 65535"},
        {{"--tls-port", "-1"},
         "invalid value '-1' for --tls-port: expected a port from 0 to 65535"},
        {{"--tls-port", "84x3"},
         "invalid value '84x3' for --tls-port: expected a port from 0 to "
         "65535"},
        {{"--tls-min-version", "1.1"},
         "invalid value '1.1' for --tls-min-version: expected 1.2 "
         "or 1.3"},
        {{"--tls-min-version", "1.0"},
         "invalid value '1.0' for --tls-min-version: expected 1.2 "
         "or 1.3"},
        {{"--tls-min-version", "TLSv1.3"},
         "invalid value 'TLSv1.3' for --tls-min-version: "
         "expected 1.2 or 1.3"},
        {{"--hsts", "63072001"},
         "invalid value '63072001' for --hsts: expected whole seconds "
         "from 0 to 63072000 (two years)"},
        {{"--hsts", "-1"},
         "invalid value '-1' for --hsts: expected whole seconds from 0 to "
         "63072000 (two years)"},
        {{"--hsts", "1.5"},
         "invalid value '1.5' for --hsts: expected whole seconds from 0 to "
         "63072000 (two years)"},
        {{"--handshake-timeout", "0.0009"},
         "invalid value '0.0009' for --handshake-timeout: "
         "expected seconds from 0.001 to 3600"},
        {{"--handshake-timeout", "0"},
         "invalid value '0' for --handshake-timeout: expected "
         "seconds from 0.001 to 3600"},
        {{"--handshake-timeout", "3600.5"},
         "invalid value '3600.5' for --handshake-timeout: "
         "expected seconds from 0.001 to 3600"},
        {{"--tls-cert="}, "invalid value '' for --tls-cert: expected a PEM certificate file"},
        {{"--tls-key", ""}, "invalid value '' for --tls-key: expected a PEM private key file"},
        {{"--tls-port"}, "option --tls-port needs a value"},
        {{"--tls-allow-expired=yes"}, "unknown option '--tls-allow-expired' (see rivet --help)"},
        {{"--redirect-https=1"}, "unknown option '--redirect-https' (see rivet --help)"},
    };
    for (const auto& c : cases) EXPECT_EQ(refusal(with_pair(c.args)), c.says) << c.args[0];
}

TEST(TlsFlags, CertificateAndKeyGoTogether) {
    EXPECT_EQ(refusal({"--tls-cert", "c.pem"}), "--tls-cert needs --tls-key (its private key)");
    EXPECT_EQ(refusal({"--tls-key", "k.pem", "--port", "9000"}),
              "--tls-key needs --tls-cert (the certificate it belongs to)");
    // The last of each wins, as for every other flag.
    auto cl = accepted({"--tls-cert", "a.pem", "--tls-key", "a.key", "--tls-cert", "b.pem"});
    ASSERT_EQ(cl.run.tls.certificates.size(), 1u);
    EXPECT_EQ(cl.run.tls.certificates[0].cert_file, "b.pem");
    EXPECT_EQ(cl.run.tls.certificates[0].key_file, "a.key");
}

TEST(TlsFlags, TlsSettingsWithoutACertificateAreRefused) {
    const std::string off =
        ": HTTPS is off; give --tls-cert and --tls-key (or the configuration file's tls section)";
    EXPECT_EQ(refusal({"--tls-port", "9443"}), "--tls-port" + off);
    EXPECT_EQ(refusal({"--tls-min-version", "1.3"}), "--tls-min-version" + off);
    EXPECT_EQ(refusal({"--tls-allow-expired"}), "--tls-allow-expired" + off);
    EXPECT_EQ(refusal({"--redirect-https", "--hsts", "60"}), "--redirect-https, --hsts" + off);
    // The handshake timeout is a timeout like the others: harmless without HTTPS.
    accepted({"--handshake-timeout", "5"});
}

TEST(TlsFlags, TheHttpsPortCannotBeAnotherListenersPort) {
    EXPECT_EQ(refusal(with_pair({"--port", "9000", "--tls-port", "9000"})),
              "the HTTPS port 9000 is the plain HTTP port too (--tls-port, tls.port)");
    EXPECT_EQ(refusal(with_pair({"--tls-port", "8080"})),
              "the HTTPS port 8080 is the plain HTTP port too (--tls-port, tls.port)");
    EXPECT_EQ(refusal(with_pair({"--admin-port", "8443"})),
              "the HTTPS port 8443 is the admin port too (--tls-port, tls.port)");
    accepted(with_pair({"--port", "0", "--tls-port", "0"}));  // tests: two free ports
}

TEST(TlsFlags, HelpListsThem) {
    auto text = rivet::server::usage();
    for (const char* flag :
         {"--tls-cert FILE", "--tls-key FILE", "--tls-port N", "--tls-min-version V",
          "--tls-allow-expired", "--redirect-https", "--hsts S", "--handshake-timeout S"})
        EXPECT_NE(text.find(flag), std::string::npos) << flag;
}
