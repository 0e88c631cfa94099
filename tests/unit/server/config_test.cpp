// The configuration file: seed 003's file as written, every error naming the key and line.
#include "server/config.hpp"

#include <gtest/gtest.h>

#include "server/command_line.hpp"
#include "server/json_lines.hpp"

using rivet::server::apply_config_file;
using rivet::server::apply_config_text;
using rivet::server::Config;
using rivet::server::default_config;

namespace {

std::string fixture(const char* name) {
    return std::string(RIVET_FIXTURES_DIR) + "/config/" + name;
}

std::string only_problem(const std::string& text) {
    Config c = default_config();
    auto problems = apply_config_text(text, "f.json", c);
    if (problems.size() == 1) return problems[0];
    std::string count = "(";
    return count.append(std::to_string(problems.size())).append(")");
}

}  // namespace

TEST(Config, Seed003FileIsAcceptedWithItsMeaning) {
    Config c = default_config();
    auto problems = apply_config_file(fixture("seed003_config.json"), c);
    ASSERT_TRUE(problems.empty()) << problems[0];
    EXPECT_EQ(c.run.host, "0.0.0.0");
    EXPECT_EQ(c.run.port, 8080);
    EXPECT_EQ(c.run.limits.max_connections, 1000u);
    EXPECT_EQ(c.run.timeouts.idle_ms, 30'000u);
    EXPECT_EQ(c.run.timeouts.write_ms, 30'000u);
    EXPECT_EQ(c.run.workers, 8u);
    EXPECT_EQ(c.run.queue, 10'000u);
    EXPECT_TRUE(c.cache.enabled);
    EXPECT_EQ(c.cache.max_size_mb, 100u);
    EXPECT_EQ(c.cache.ttl_seconds, 300u);
    EXPECT_TRUE(c.run.ops.rate_limit.enabled);
    EXPECT_EQ(c.run.ops.rate_limit.requests_per_second, 100);
    EXPECT_EQ(c.run.ops.rate_limit.burst, 200);
}

TEST(Config, EverySectionSetsItsKeys) {
    Config c = default_config();
    auto problems = apply_config_text(R"({
      "server": {"io_threads": 3},
      "logging": {"access_log": "/tmp/a.log", "format": "json", "error_log": "stdout",
                  "level": "debug", "flush_interval_ms": 100},
      "limits": {"max_request_line": 1000, "max_header_bytes": 2000, "max_headers": 20,
                 "max_body_bytes": 3000, "header_timeout": 1.5, "body_timeout": 2,
                 "keepalive_timeout": 3, "write_timeout": 4, "drain_timeout": 0,
                 "max_requests_per_connection": 7},
      "rate_limiting": {"allow": ["10.0.0.0/8", "::1"], "trusted_proxies": ["127.0.0.1"],
                        "max_clients": 5000},
      "static": {"root": "/srv/www"},
      "metrics": {"enabled": false, "status_page": false, "health": false,
                  "admin_port": 9100, "admin_host": "::1"}
    })",
                                      "f.json", c);
    ASSERT_TRUE(problems.empty()) << problems[0];
    EXPECT_EQ(c.run.threads, 3u);
    EXPECT_EQ(c.run.ops.log.access_log, "/tmp/a.log");
    EXPECT_EQ(c.run.ops.log.format, rivet::LogFormat::Json);
    EXPECT_EQ(c.run.ops.log.level, rivet::LogLevel::Debug);
    EXPECT_EQ(c.run.ops.log.flush_ms, 100u);
    EXPECT_EQ(c.run.limits.max_request_line, 1000u);
    EXPECT_EQ(c.run.limits.max_header_bytes, 2000u);
    EXPECT_EQ(c.run.limits.max_headers, 20u);
    EXPECT_EQ(c.run.limits.max_body, 3000u);
    EXPECT_EQ(c.run.timeouts.header_ms, 1500u);
    EXPECT_EQ(c.run.timeouts.body_ms, 2000u);
    EXPECT_EQ(c.run.timeouts.idle_ms, 3000u);
    EXPECT_EQ(c.run.timeouts.write_ms, 4000u);
    EXPECT_EQ(c.run.timeouts.drain_ms, 0u);
    EXPECT_EQ(c.run.limits.max_requests_per_connection, 7u);
    EXPECT_EQ(c.run.ops.rate_limit.allow.size(), 2u);
    EXPECT_EQ(c.run.ops.rate_limit.max_clients, 5000u);
    EXPECT_EQ(c.demo.root, "/srv/www");
    EXPECT_FALSE(c.run.ops.admin.metrics);
    EXPECT_EQ(c.run.ops.admin.admin_port, 9100);
    EXPECT_EQ(c.run.ops.admin.admin_host, "::1");
}

TEST(Config, NarrowTimeoutsWinOverSocketTimeoutWhateverTheOrder) {
    Config c = default_config();
    auto p = apply_config_text(
        R"({"limits": {"write_timeout": 5}, "server": {"socket_timeout": 30}})", "f", c);
    ASSERT_TRUE(p.empty());
    EXPECT_EQ(c.run.timeouts.idle_ms, 30'000u);
    EXPECT_EQ(c.run.timeouts.write_ms, 5'000u);
}

TEST(Config, ProblemsNameTheFileLineAndKey) {
    EXPECT_EQ(only_problem("{\n  \"server\": {\n    \"prot\": 1\n  }\n}"),
              "f.json:3: unknown key \"server.prot\"");
    EXPECT_EQ(only_problem("{\"servers\": {}}"), "f.json:1: unknown key \"servers\"");
    EXPECT_EQ(only_problem("{\n\"server\": {\"port\": \"80\"}}"),
              "f.json:2: server.port: expected an integer from 0 to 65535, got \"80\"");
    EXPECT_EQ(only_problem("{\"limits\": {\n\n \"max_body_bytes\": -1}}"),
              "f.json:3: limits.max_body_bytes: expected an integer from 0 to 1099511627776, "
              "got -1");
    EXPECT_EQ(only_problem("{\"cache\": {\"enabled\": 1}}"),
              "f.json:1: cache.enabled: expected true or false, got 1");
    EXPECT_EQ(only_problem("{\"server\": 5}"), "f.json:1: server: expected an object, got 5");
    EXPECT_EQ(only_problem("{\"rate_limiting\": {\"allow\": [\"10.0.0.0/33\"]}}"),
              "f.json:1: rate_limiting.allow: expected a list of addresses or CIDR networks; "
              "\"10.0.0.0/33\" is not one");
    EXPECT_EQ(only_problem("{\"rate_limiting\": {\"requests_per_second\": 0}}"),
              "f.json:1: rate_limiting.requests_per_second: expected a number from 0.001 to "
              "1e+09, got 0");
    EXPECT_EQ(only_problem("[1]"), "f.json:1: the configuration must be a JSON object");
    EXPECT_EQ(only_problem("{\n\"server\": {,}}").rfind("f.json:2: invalid JSON: syntax error", 0),
              0u);
}

TEST(Config, CacheSettingsReachTheStaticFiles) {
    Config c = default_config();
    ASSERT_TRUE(apply_config_file(fixture("seed003_config.json"), c).empty());
    rivet::server::apply_cache_options(c);
    EXPECT_EQ(c.demo.files.cache_bytes, 100u << 20);
    EXPECT_EQ(c.demo.files.cache_ttl, std::chrono::seconds(300));
    c.cache.enabled = false;
    rivet::server::apply_cache_options(c);
    EXPECT_EQ(c.demo.files.cache_bytes, 0u);
    EXPECT_EQ(c.demo.files.cache_ttl.count(), 0);
}

TEST(Config, NothingIsAppliedWhenAnythingIsWrong) {
    Config c = default_config();
    auto p = apply_config_text(R"({"server": {"port": 1234, "host": "nowhere"}})", "f", c);
    ASSERT_EQ(p.size(), 1u);
    EXPECT_EQ(c.run.port, 8080);
}

TEST(Config, UnreadableFile) {
    Config c = default_config();
    auto p = apply_config_file("/nonexistent/rivet.json", c);
    ASSERT_EQ(p.size(), 1u);
    EXPECT_NE(p[0].find("/nonexistent/rivet.json: cannot read"), std::string::npos) << p[0];
}

TEST(Config, EffectiveConfigReadsBackAsTheSameConfig) {
    Config c = default_config();
    c.run.port = 1234;
    c.run.timeouts.header_ms = 2500;
    c.run.ops.rate_limit.allow = {"10.0.0.0/8"};
    std::string text = rivet::server::effective_config(c).dump();
    Config back = default_config();
    auto p = apply_config_text(text, "effective", back);
    ASSERT_TRUE(p.empty()) << p[0];
    EXPECT_EQ(rivet::server::effective_config(back).dump(), text);
}

TEST(JsonLines, PointersToLines) {
    auto lines = rivet::server::json_key_lines(
        "{\n \"a\": {\n  \"b\": [1,\n 2, {\"c\": 3}],\n"
        " \"d/e\": \"x,}\"\n }\n}");
    EXPECT_EQ(lines["/a"], 2);
    EXPECT_EQ(lines["/a/b"], 3);
    EXPECT_EQ(lines["/a/b/0"], 3);
    EXPECT_EQ(lines["/a/b/1"], 4);
    EXPECT_EQ(lines["/a/b/2/c"], 4);
    EXPECT_EQ(lines["/a/d~1e"], 5);
}

TEST(Config, RefusesDeepNestingBeforeParsing) {
    // 16 levels pass the depth check (and fail the schema as usual); 17 are refused, with the
    // line of the bracket that crossed the limit. 100,000 levels take no more time or memory.
    auto nested = [](size_t depth, const char* inner) {
        return "{\"server\":" + std::string(depth - 1, '[') + inner + std::string(depth - 1, ']') +
               "}";
    };
    Config c = default_config();
    auto ok = apply_config_text(nested(16, ""), "f.json", c);
    ASSERT_EQ(ok.size(), 1u);
    EXPECT_NE(ok[0].find("server: expected an object"), std::string::npos) << ok[0];
    auto deep = apply_config_text(nested(17, ""), "f.json", c);
    ASSERT_EQ(deep.size(), 1u);
    EXPECT_EQ(deep[0], "f.json:1: nested deeper than 16 levels; the configuration needs 3");
    auto huge = apply_config_text("{\n\"a\":\n" + nested(100'000, "\n"), "f.json", c);
    ASSERT_EQ(huge.size(), 1u);
    EXPECT_EQ(huge[0].rfind("f.json:3: nested deeper", 0), 0u) << huge[0];
    // Brackets inside strings (escaped quotes included) are text, not nesting.
    auto text = apply_config_text("{\"static\": {\"root\": \"" + std::string(100, '[') + "\\\"" +
                                      std::string(100, '{') + "\"}}",
                                  "f.json", c);
    EXPECT_TRUE(text.empty()) << text[0];
}

TEST(CommandLine, FlagsOverrideTheFile) {
    auto cl = rivet::server::parse_command_line(
        {"--port", "9000", "--config", fixture("seed003_config.json"), "--max-connections", "5",
         "--header-timeout", "0.5", "--access-log", "off", "--log-format", "common", "--rate-limit",
         "0"});
    ASSERT_EQ(cl.action, rivet::server::CommandLine::Action::Serve) << cl.error;
    EXPECT_EQ(cl.run.port, 9000);
    EXPECT_EQ(cl.run.workers, 8u);  // from the file
    EXPECT_EQ(cl.run.limits.max_connections, 5u);
    EXPECT_EQ(cl.run.timeouts.header_ms, 500u);
    EXPECT_EQ(cl.run.ops.log.format, rivet::LogFormat::Common);
    EXPECT_FALSE(cl.run.ops.rate_limit.enabled);
}

TEST(CommandLine, ConfigErrorsAndCheckConfig) {
    auto bad = rivet::server::parse_command_line({"--config", "/nonexistent.json"});
    EXPECT_EQ(bad.action, rivet::server::CommandLine::Action::Error);
    auto check = rivet::server::parse_command_line({"--check-config"});
    EXPECT_EQ(check.action, rivet::server::CommandLine::Action::CheckConfig);
    auto flag = rivet::server::parse_command_line({"--log-format", "xml"});
    EXPECT_EQ(flag.error, "invalid value 'xml' for --log-format");
}

TEST(Config, ServerUserIsANameAndTheFlagWins) {
    Config c = default_config();
    EXPECT_EQ(c.user, "");
    EXPECT_TRUE(apply_config_text(R"({"server": {"user": "www-data"}})", "t", c).empty());
    EXPECT_EQ(c.user, "www-data");
    EXPECT_EQ(rivet::server::effective_config(c)["server"]["user"], "www-data");
    auto problems = apply_config_text(R"({"server": {"user": 33}})", "t", c);
    ASSERT_EQ(problems.size(), 1u);
    EXPECT_NE(problems[0].find("server.user: expected a user name"), std::string::npos);
    auto cl = rivet::server::parse_command_line({"--user", "nobody"});
    EXPECT_EQ(cl.user, "nobody");
    EXPECT_EQ(rivet::server::parse_command_line({"--user", ""}).action,
              rivet::server::CommandLine::Action::Error);
}

TEST(Config, PidFileAndUpgradeTimeout) {
    Config c = default_config();
    EXPECT_EQ(c.pid_file, "");
    EXPECT_EQ(c.upgrade_timeout_ms, 30'000u);
    EXPECT_TRUE(apply_config_text(R"({"server": {"pid_file": "/run/rivet/rivet.pid",
                                                  "upgrade_timeout": 0.1}})",
                                  "t", c)
                    .empty());
    EXPECT_EQ(c.pid_file, "/run/rivet/rivet.pid");
    EXPECT_EQ(c.upgrade_timeout_ms, 100u);
    EXPECT_EQ(rivet::server::effective_config(c)["server"]["upgrade_timeout"], 0.1);
    for (const char* bad :
         {R"({"server": {"upgrade_timeout": 0.09}})", R"({"server": {"upgrade_timeout": 3601}})",
          R"({"server": {"pid_file": 7}})"})
        EXPECT_EQ(apply_config_text(bad, "t", c).size(), 1u) << bad;
    auto cl = rivet::server::parse_command_line(
        {"--pid-file", "/tmp/r.pid", "--upgrade-timeout", "3600"});
    EXPECT_EQ(cl.pid_file, "/tmp/r.pid");
    EXPECT_EQ(cl.upgrade_timeout_ms, 3'600'000u);
    for (auto bad : {std::vector<std::string>{"--pid-file", ""},
                     {"--upgrade-timeout", "0.05"},
                     {"--upgrade-timeout", "3601"}})
        EXPECT_EQ(rivet::server::parse_command_line(bad).action,
                  rivet::server::CommandLine::Action::Error)
            << bad[1];
}

TEST(Config, Http2IsOnUnlessTheFileOrTheFlagSaysNo) {
    Config c = default_config();
    EXPECT_TRUE(c.run.http2);
    EXPECT_EQ(rivet::server::effective_config(c)["server"]["http2"], true);
    EXPECT_TRUE(apply_config_text(R"({"server": {"http2": false}})", "t", c).empty());
    EXPECT_FALSE(c.run.http2);
    EXPECT_EQ(rivet::server::effective_config(c)["server"]["http2"], false);
    auto problems = apply_config_text(R"({"server": {"http2": "no"}})", "t", c);
    ASSERT_EQ(problems.size(), 1u);
    EXPECT_NE(problems[0].find("server.http2"), std::string::npos) << problems[0];

    using rivet::server::parse_command_line;
    EXPECT_TRUE(parse_command_line({}).run.http2);
    auto off = parse_command_line({"--no-http2"});
    ASSERT_EQ(off.action, rivet::server::CommandLine::Action::Serve) << off.error;
    EXPECT_FALSE(off.run.http2);
    EXPECT_EQ(parse_command_line({"--no-http2=yes"}).action,
              rivet::server::CommandLine::Action::Error);
    EXPECT_NE(rivet::server::usage().find("--no-http2"), std::string::npos);
}
