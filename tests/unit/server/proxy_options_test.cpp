// The PROXY protocol's settings: --proxy-protocol, --proxy-trusted, server.proxy_protocol and
// server.proxy_trusted, their bound, and App::start refusing a bad entry.
#include <gtest/gtest.h>

#include <stdexcept>
#include <string>
#include <vector>

#include <rivet/app.hpp>

#include "server/command_line.hpp"
#include "server/config.hpp"

using rivet::server::apply_config_text;
using rivet::server::CommandLine;
using rivet::server::Config;
using rivet::server::default_config;
using rivet::server::kMaxProxyTrusted;
using rivet::server::parse_command_line;

namespace {

std::string joined(size_t n, const char* item, const char* sep) {
    std::string s;
    for (size_t i = 0; i < n; ++i) {
        if (i) s += sep;
        s += item;
    }
    return s;
}

}  // namespace

TEST(ProxyOptions, FlagsSetBoth) {
    auto cl = parse_command_line({});
    EXPECT_FALSE(cl.run.proxy_protocol);
    EXPECT_TRUE(cl.run.proxy_trusted.empty());
    cl = parse_command_line({"--proxy-protocol", "--proxy-trusted", "10.0.0.0/8,::1, 192.0.2.7"});
    ASSERT_EQ(cl.action, CommandLine::Action::Serve) << cl.error;
    EXPECT_TRUE(cl.run.proxy_protocol);
    EXPECT_EQ(cl.run.proxy_trusted, (std::vector<std::string>{"10.0.0.0/8", "::1", " 192.0.2.7"}));
    EXPECT_EQ(parse_command_line({"--proxy-protocol=yes"}).action, CommandLine::Action::Error);
}

TEST(ProxyOptions, FlagErrorsNameTheEntry) {
    struct Case {
        std::string value, expect;
    } cases[] = {
        {"10.0.0.0/8,bogus", "--proxy-trusted: \"bogus\" is not an address or CIDR network"},
        {"10.0.0.0/33", "\"10.0.0.0/33\" is not"},
        {"10.0.0.0/8,,::1", "\"\" is not"},
        {"10.0.0.0/8,", "\"\" is not"},
        {"", "\"\" is not"},
        {"example.com", "\"example.com\" is not"},
    };
    for (const auto& c : cases) {
        auto cl = parse_command_line({"--proxy-trusted", c.value});
        EXPECT_EQ(cl.action, CommandLine::Action::Error) << c.value;
        EXPECT_NE(cl.error.find(c.expect), std::string::npos) << cl.error;
    }
}

TEST(ProxyOptions, TheListIsBounded) {
    auto ok = parse_command_line({"--proxy-trusted", joined(kMaxProxyTrusted, "10.0.0.1", ",")});
    ASSERT_EQ(ok.action, CommandLine::Action::Serve) << ok.error;
    EXPECT_EQ(ok.run.proxy_trusted.size(), kMaxProxyTrusted);
    auto over =
        parse_command_line({"--proxy-trusted", joined(kMaxProxyTrusted + 1, "10.0.0.1", ",")});
    EXPECT_EQ(over.action, CommandLine::Action::Error);
    EXPECT_NE(over.error.find("more than 1000"), std::string::npos) << over.error;

    Config c = default_config();
    std::string list = "[" + joined(kMaxProxyTrusted, "\"::1\"", ",") + "]";
    EXPECT_TRUE(
        apply_config_text(R"({"server": {"proxy_trusted": )" + list + "}}", "t", c).empty());
    EXPECT_EQ(c.run.proxy_trusted.size(), kMaxProxyTrusted);
    list = "[" + joined(kMaxProxyTrusted + 1, "\"::1\"", ",") + "]";
    auto problems = apply_config_text(R"({"server": {"proxy_trusted": )" + list + "}}", "t", c);
    ASSERT_EQ(problems.size(), 1u);
    EXPECT_NE(problems[0].find("server.proxy_trusted: more than 1000"), std::string::npos)
        << problems[0];
}

TEST(ProxyOptions, ConfigKeysAndCheckConfig) {
    Config c = default_config();
    auto p = apply_config_text(
        R"({"server": {"proxy_protocol": true, "proxy_trusted": ["10.1.0.0/16", "fd00::/8"]}})",
        "t", c);
    ASSERT_TRUE(p.empty()) << p[0];
    EXPECT_TRUE(c.run.proxy_protocol);
    EXPECT_EQ(c.run.proxy_trusted, (std::vector<std::string>{"10.1.0.0/16", "fd00::/8"}));
    auto shown = rivet::server::effective_config(c);
    EXPECT_EQ(shown["server"]["proxy_protocol"], true);
    EXPECT_EQ(shown["server"]["proxy_trusted"][1], "fd00::/8");
    // What --check-config prints reads back as the same.
    Config back = default_config();
    ASSERT_TRUE(apply_config_text(shown.dump(), "effective", back).empty());
    EXPECT_EQ(rivet::server::effective_config(back).dump(), shown.dump());

    struct Case {
        const char* text;
        const char* expect;
    } bad[] = {
        {R"({"server": {"proxy_protocol": "yes"}})",
         "server.proxy_protocol: expected true or false"},
        {R"({"server": {"proxy_trusted": "10.0.0.0/8"}})", "server.proxy_trusted: expected a list"},
        {R"({"server": {"proxy_trusted": ["10.0.0.0/8", 7]}})", "7 is not one"},
        {R"({"server": {"proxy_trusted": ["10.0.0.0/8", "10.0.0.0/99"]}})",
         "\"10.0.0.0/99\" is not an address or CIDR network"},
    };
    for (const auto& b : bad) {
        Config d = default_config();
        auto problems = apply_config_text(b.text, "t", d);
        ASSERT_EQ(problems.size(), 1u) << b.text;
        EXPECT_NE(problems[0].find(b.expect), std::string::npos) << problems[0];
        EXPECT_FALSE(d.run.proxy_protocol);
    }
}

TEST(ProxyOptions, StartRefusesABadEntry) {
    rivet::App app;
    rivet::RunOptions o;
    o.host = "127.0.0.1";
    o.port = 0;
    o.threads = 1;
    o.workers = 1;
    o.quiet = true;
    o.proxy_protocol = true;
    o.proxy_trusted = {"10.0.0.0/8", "not-a-network"};
    try {
        app.start(o);
        FAIL() << "start() accepted a bad proxy_trusted entry";
    } catch (const std::invalid_argument& e) {
        EXPECT_NE(std::string(e.what()).find("not-a-network"), std::string::npos) << e.what();
    }
    o.proxy_trusted = {"10.0.0.0/8"};
    EXPECT_NE(app.start(o), 0);  // nothing was left half started
    app.stop();
}
