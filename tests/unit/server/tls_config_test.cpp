// The configuration file's "tls" section and limits.handshake_timeout: every key, every bound
// crossed, errors naming the key and its line, flags over the file, and --check-config's output
// reading back as the same configuration.
#include "server/tls_config.hpp"

#include <unistd.h>

#include <cstdio>
#include <fstream>
#include <string>

#include <gtest/gtest.h>

#include "server/command_line.hpp"
#include "server/tls_check.hpp"

using rivet::server::apply_config_text;
using rivet::server::Config;
using rivet::server::default_config;
using rivet::server::effective_config;

namespace {

const std::string kCert = R"("certificates": [{"cert": "c.pem", "key": "k.pem"}])";

// The problems of a file whose tls section holds the certificate above and `more` keys.
std::vector<std::string> problems_of(const std::string& more) {
    Config c = default_config();
    return apply_config_text("{\"tls\": {" + kCert + (more.empty() ? "" : ", ") + more + "}}",
                             "f.json", c);
}

std::string only_problem(const std::string& text) {
    Config c = default_config();
    auto problems = apply_config_text(text, "f.json", c);
    if (problems.size() != 1)
        return std::string("(").append(std::to_string(problems.size())).append(" problems)");
    EXPECT_TRUE(c.run.tls.certificates.empty()) << "a refused file was applied";
    return problems[0];
}

Config applied(const std::string& text) {
    Config c = default_config();
    auto problems = apply_config_text(text, "f.json", c);
    EXPECT_TRUE(problems.empty()) << problems[0];
    return c;
}

std::string certificates(size_t n) {
    std::string list;
    for (size_t i = 0; i < n; ++i)
        list += std::string(i ? ", " : "") + "{\"cert\": \"c" + std::to_string(i) +
                ".pem\", \"key\": \"k" + std::to_string(i) + ".pem\"}";
    return "{\"tls\": {\"certificates\": [" + list + "]}}";
}

}  // namespace

TEST(TlsConfig, EveryKeySetsItsOption) {
    Config c = applied(R"({
      "tls": {"certificates": [{"cert": "a.pem", "key": "a.key"},
                               {"cert": "/etc/b.pem", "key": "/etc/b.key"}],
              "host": "127.0.0.1", "port": 443, "min_version": "1.3",
              "ciphers": "ECDHE-ECDSA-AES128-GCM-SHA256", "allow_expired": true,
              "ticket_key_lifetime": 600, "session_cache": 0, "redirect_http": true,
              "hsts": 31536000, "hsts_include_subdomains": true},
      "limits": {"handshake_timeout": 2.5}
    })");
    const auto& t = c.run.tls;
    ASSERT_EQ(t.certificates.size(), 2u);
    EXPECT_EQ(t.certificates[0].cert_file, "a.pem");  // as written: the working directory's
    EXPECT_EQ(t.certificates[0].key_file, "a.key");
    EXPECT_EQ(t.certificates[1].cert_file, "/etc/b.pem");
    EXPECT_EQ(t.certificates[1].key_file, "/etc/b.key");
    EXPECT_EQ(t.host, "127.0.0.1");
    EXPECT_EQ(t.port, 443);
    EXPECT_EQ(t.min_version, "1.3");
    EXPECT_EQ(t.ciphers, "ECDHE-ECDSA-AES128-GCM-SHA256");
    EXPECT_TRUE(t.allow_expired);
    EXPECT_EQ(t.ticket_key_lifetime_s, 600u);
    EXPECT_EQ(t.session_cache_size, 0u);
    EXPECT_TRUE(t.redirect_http);
    EXPECT_EQ(t.hsts_max_age_s, 31'536'000u);
    EXPECT_TRUE(t.hsts_include_subdomains);
    EXPECT_EQ(c.run.timeouts.handshake_ms, 2'500u);
}

TEST(TlsConfig, DefaultsWithOnlyACertificate) {
    Config c = applied("{\"tls\": {" + kCert + "}}");
    const rivet::TlsOptions defaults;
    EXPECT_EQ(c.run.tls.port, 8443);
    EXPECT_EQ(c.run.tls.host, "");
    EXPECT_EQ(c.run.tls.min_version, "1.2");
    EXPECT_EQ(c.run.tls.ticket_key_lifetime_s, defaults.ticket_key_lifetime_s);
    EXPECT_EQ(c.run.tls.session_cache_size, defaults.session_cache_size);
    EXPECT_FALSE(c.run.tls.redirect_http);
    EXPECT_EQ(c.run.tls.hsts_max_age_s, 0u);
}

TEST(TlsConfig, SessionTicketsFalseWinsInAnyOrder) {
    for (const char* keys : {R"("session_tickets": false, "ticket_key_lifetime": 600)",
                             R"("ticket_key_lifetime": 600, "session_tickets": false)"}) {
        Config c = applied("{\"tls\": {" + kCert + ", " + keys + "}}");
        EXPECT_EQ(c.run.tls.ticket_key_lifetime_s, 0u) << keys;
    }
    Config on = applied("{\"tls\": {" + kCert + R"(, "session_tickets": true}})");
    EXPECT_EQ(on.run.tls.ticket_key_lifetime_s, 3600u);
}

TEST(TlsConfig, BoundsAreInclusive) {
    EXPECT_EQ(applied(certificates(1)).run.tls.certificates.size(), 1u);
    EXPECT_EQ(applied(certificates(64)).run.tls.certificates.size(), 64u);
    for (const char* ok :
         {R"("port": 0)", R"("port": 65535)", R"("ticket_key_lifetime": 60)",
          R"("ticket_key_lifetime": 86400)", R"("session_cache": 1000000)", R"("hsts": 63072000)",
          R"("ciphers": "")", R"("host": "")", R"("host": "::1")"})
        EXPECT_TRUE(problems_of(ok).empty()) << ok;
    EXPECT_EQ(applied(R"({"limits": {"handshake_timeout": 0.001}})").run.timeouts.handshake_ms, 1u);
    EXPECT_EQ(applied(R"({"limits": {"handshake_timeout": 3600}})").run.timeouts.handshake_ms,
              3'600'000u);
}

TEST(TlsConfig, EveryBadValueNamesTheKeyAndItsLine) {
    const std::string list = "expected a list of 1 to 64 {\"cert\": FILE, \"key\": FILE}";
    struct Case {
        std::string text;
        std::string says;
    } cases[] = {
        {"{\"tls\": 1}", "f.json:1: tls: expected an object, got 1"},
        {"{\"tls\": {}}",
         "f.json:1: tls: the section turns HTTPS on and needs \"certificates\": "
         "[{\"cert\": FILE, \"key\": FILE}]"},
        {"{\"tls\":\n {\"port\": 9443}}",
         "f.json:1: tls: the section turns HTTPS on and needs \"certificates\": [{\"cert\": "
         "FILE, \"key\": FILE}]"},
        {"{\"tls\": {\"certificates\": []}}", "f.json:1: tls.certificates: " + list + ", got 0"},
        {certificates(65), "f.json:1: tls.certificates: " + list + ", got 65"},
        {"{\"tls\": {\"certificates\": \"c.pem\"}}",
         "f.json:1: tls.certificates: " + list + ", got \"c.pem\""},
        {"{\"tls\": {\"certificates\": [\"c.pem\"]}}",
         "f.json:1: tls.certificates: [0]: expected {\"cert\": FILE, \"key\": FILE}, got "
         "\"c.pem\""},
        {"{\"tls\": {\"certificates\": [{\"cert\": \"c\", \"key\": \"k\"}, {\"cert\": \"c\"}]}}",
         "f.json:1: tls.certificates: [1]: \"key\" is missing"},
        {"{\"tls\": {\"certificates\": [{\"cert\": \"\", \"key\": \"k\"}]}}",
         "f.json:1: tls.certificates: [0].cert: expected a file path, got \"\""},
        {"{\"tls\": {\"certificates\": [{\"cert\": \"c\", \"key\": 7}]}}",
         "f.json:1: tls.certificates: [0].key: expected a file path, got 7"},
        {"{\"tls\": {\"certificates\": [{\"cert\": \"c\", \"key\": \"k\", \"chain\": \"x\"}]}}",
         "f.json:1: tls.certificates: [0]: unknown key \"chain\""},
        {"{\"tls\": {" + kCert + ",\n \"port\": 65536}}",
         "f.json:2: tls.port: expected an integer from 0 to 65535, got 65536"},
        {"{\"tls\": {" + kCert + ",\n \"port\": -1}}",
         "f.json:2: tls.port: expected an integer from 0 to 65535, got -1"},
        {"{\"tls\": {" + kCert + ",\n\n \"min_version\": \"1.1\"}}",
         "f.json:3: tls.min_version: expected one of \"1.2\", \"1.3\", got \"1.1\""},
        {"{\"tls\": {" + kCert + ", \"min_version\": 1.3}}",
         "f.json:1: tls.min_version: expected one of \"1.2\", \"1.3\", got 1.3"},
        {"{\"tls\": {" + kCert + ", \"ciphers\": 7}}",
         "f.json:1: tls.ciphers: expected an OpenSSL cipher list (\"\" for the default), got 7"},
        {"{\"tls\": {" + kCert + ", \"allow_expired\": \"yes\"}}",
         "f.json:1: tls.allow_expired: expected true or false, got \"yes\""},
        {"{\"tls\": {" + kCert + ", \"session_tickets\": 0}}",
         "f.json:1: tls.session_tickets: expected true or false, got 0"},
        {"{\"tls\": {" + kCert + ", \"ticket_key_lifetime\": 59}}",
         "f.json:1: tls.ticket_key_lifetime: expected an integer from 60 to 86400, got 59"},
        {"{\"tls\": {" + kCert + ", \"ticket_key_lifetime\": 86401}}",
         "f.json:1: tls.ticket_key_lifetime: expected an integer from 60 to 86400, got 86401"},
        {"{\"tls\": {" + kCert + ", \"session_cache\": 1000001}}",
         "f.json:1: tls.session_cache: expected an integer from 0 to 1000000, got 1000001"},
        {"{\"tls\": {" + kCert + ", \"session_cache\": -1}}",
         "f.json:1: tls.session_cache: expected an integer from 0 to 1000000, got -1"},
        {"{\"tls\": {" + kCert + ", \"redirect_http\": 1}}",
         "f.json:1: tls.redirect_http: expected true or false, got 1"},
        {"{\"tls\": {" + kCert + ", \"hsts\": 63072001}}",
         "f.json:1: tls.hsts: expected an integer from 0 to 63072000, got 63072001"},
        {"{\"tls\": {" + kCert + ", \"hsts\": -1}}",
         "f.json:1: tls.hsts: expected an integer from 0 to 63072000, got -1"},
        {"{\"tls\": {" + kCert + ", \"hsts_include_subdomains\": null}}",
         "f.json:1: tls.hsts_include_subdomains: expected true or false, got null"},
        {"{\"tls\": {" + kCert + ", \"host\": \"localhost\"}}",
         "f.json:1: tls.host: expected a numeric IPv4 or IPv6 address, got \"localhost\""},
        {"{\"tls\": {" + kCert + ",\n \"cert\": \"c.pem\"}}", "f.json:2: unknown key \"tls.cert\""},
        {"{\"limits\": {\"handshake_timeout\": 0.0009}}",
         "f.json:1: limits.handshake_timeout: expected seconds from 0.001 to 3600, got 0.0009"},
        {"{\"limits\": {\"handshake_timeout\": 3601}}",
         "f.json:1: limits.handshake_timeout: expected seconds from 0.001 to 3600, got 3601"},
    };
    for (const auto& c : cases) EXPECT_EQ(only_problem(c.text), c.says) << c.text;
}

TEST(TlsConfig, CheckConfigShowsTheSectionOnlyWithHttpsOn) {
    Config off = default_config();
    auto shown = effective_config(off);
    EXPECT_FALSE(shown.contains("tls"));
    EXPECT_EQ(shown["limits"]["handshake_timeout"], 10.0);
    Config back = default_config();  // and reads back as the same
    ASSERT_TRUE(apply_config_text(shown.dump(), "effective", back).empty());
    EXPECT_EQ(effective_config(back).dump(), shown.dump());

    for (const char* extra : {"", R"(, "session_tickets": false, "hsts": 60)"}) {
        Config on = applied("{\"tls\": {" + kCert + extra + R"(, "port": 0}})");
        auto with = effective_config(on);
        ASSERT_TRUE(with.contains("tls"));
        EXPECT_EQ(with["tls"]["certificates"][0]["cert"], "c.pem");
        EXPECT_EQ(with["tls"]["port"], 0);
        EXPECT_EQ(with["tls"]["session_tickets"], std::string(extra).empty());
        Config again = default_config();
        auto problems = apply_config_text(with.dump(), "effective", again);
        ASSERT_TRUE(problems.empty()) << problems[0];
        EXPECT_EQ(effective_config(again).dump(), with.dump());
    }
}

TEST(TlsConfig, FlagsOverrideTheFileAndAReloadRereadsIt) {
    std::string path =
        ::testing::TempDir() + "rivet_tls_config_" + std::to_string(getpid()) + ".json";
    auto write = [&](const std::string& text) { std::ofstream(path) << text; };
    write(R"({"tls": {"certificates": [{"cert": "a.pem", "key": "a.key"},
                                        {"cert": "b.pem", "key": "b.key"}],
                      "port": 9443, "hsts": 60}})");
    auto cl = rivet::server::parse_command_line({"--config", path});
    ASSERT_EQ(cl.action, rivet::server::CommandLine::Action::Serve) << cl.error;
    EXPECT_EQ(cl.run.tls.certificates.size(), 2u);
    EXPECT_EQ(cl.run.tls.port, 9443);
    // One pair on the command line stands for the file's whole list.
    auto flags = rivet::server::parse_command_line(
        {"--config", path, "--tls-cert", "f.pem", "--tls-key", "f.key", "--hsts", "0"});
    ASSERT_EQ(flags.action, rivet::server::CommandLine::Action::Serve) << flags.error;
    ASSERT_EQ(flags.run.tls.certificates.size(), 1u);
    EXPECT_EQ(flags.run.tls.certificates[0].cert_file, "f.pem");
    EXPECT_EQ(flags.run.tls.port, 9443);
    EXPECT_EQ(flags.run.tls.hsts_max_age_s, 0u);
    // SIGHUP re-reads with the same arguments (main.cpp's on_reload): the new section is in
    // the RunOptions handed to App::reconfigure.
    write(R"({"tls": {"certificates": [{"cert": "new.pem", "key": "new.key"}], "port": 9443}})");
    auto reread = rivet::server::parse_command_line({"--config", path});
    ASSERT_EQ(reread.action, rivet::server::CommandLine::Action::Serve) << reread.error;
    ASSERT_EQ(reread.run.tls.certificates.size(), 1u);
    EXPECT_EQ(reread.run.tls.certificates[0].cert_file, "new.pem");
    // The port clash is caught with the file too.
    write(R"({"server": {"port": 9443}, "tls": {"certificates": [{"cert": "a", "key": "b"}],
                                                "port": 9443}})");
    EXPECT_EQ(rivet::server::parse_command_line({"--config", path}).error,
              "the HTTPS port 9443 is the plain HTTP port too (--tls-port, tls.port)");
    std::remove(path.c_str());
}

TEST(TlsCheck, NothingToCheckWithHttpsOff) {
    EXPECT_TRUE(rivet::server::check_tls_files({}).empty());
}

TEST(TlsCheck, AMissingCertificateFileIsAProblem) {
    rivet::TlsOptions o;
    o.certificates = {{"/nonexistent/rivet-cert.pem", "/nonexistent/rivet-key.pem"}};
    auto problems = rivet::server::check_tls_files(o);
    ASSERT_FALSE(problems.empty());
    EXPECT_NE(problems[0].find("/nonexistent/rivet-cert.pem"), std::string::npos) << problems[0];
}
