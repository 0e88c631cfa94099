#include "server/command_line.hpp"

#include <string>

#include <gtest/gtest.h>
#include <rivet/version.hpp>

using rivet::server::CommandLine;
using rivet::server::parse_command_line;

TEST(CommandLine, Defaults) {
    auto cl = parse_command_line({});
    EXPECT_EQ(cl.action, CommandLine::Action::Serve);
    EXPECT_EQ(cl.run.port, 8080);
    EXPECT_EQ(cl.run.host, "0.0.0.0");
    EXPECT_EQ(cl.demo.root, "public");
}

TEST(CommandLine, ValuesInBothSpellings) {
    auto cl = parse_command_line({"--port", "9000", "--bind=127.0.0.1", "--threads=3", "--workers",
                                  "5", "--queue", "7", "--root", "/srv"});
    ASSERT_EQ(cl.action, CommandLine::Action::Serve) << cl.error;
    EXPECT_EQ(cl.run.port, 9000);
    EXPECT_EQ(cl.run.host, "127.0.0.1");
    EXPECT_EQ(cl.run.threads, 3u);
    EXPECT_EQ(cl.run.workers, 5u);
    EXPECT_EQ(cl.run.queue, 7u);
    EXPECT_EQ(cl.demo.root, "/srv");
}

TEST(CommandLine, InlineHeavyIsASwitch) {
    EXPECT_FALSE(parse_command_line({}).demo.inline_heavy);
    auto cl = parse_command_line({"--inline-heavy", "--port", "9000"});
    ASSERT_EQ(cl.action, CommandLine::Action::Serve) << cl.error;
    EXPECT_TRUE(cl.demo.inline_heavy);
    EXPECT_EQ(cl.run.port, 9000);
    EXPECT_EQ(parse_command_line({"--inline-heavy=yes"}).action, CommandLine::Action::Error);
}

TEST(CommandLine, ErrorsNameTheProblem) {
    struct Case {
        std::vector<std::string> args;
        std::string expect;
    } cases[] = {
        {{"--nope"}, "unknown option '--nope'"},
        {{"--port"}, "--port needs a value"},
        {{"--port", "abc"}, "invalid value 'abc' for --port"},
        {{"--port", "65536"}, "invalid value '65536' for --port"},
        {{"--port", "-1"}, "invalid value '-1' for --port"},
        {{"--threads", "0"}, "invalid value '0' for --threads"},
        {{"--workers=x"}, "invalid value 'x' for --workers"},
        {{"--queue", "0"}, "invalid value '0' for --queue"},
        {{"--root="}, "invalid value '' for --root"},
        {{"extra"}, "unknown option 'extra'"},
    };
    for (const auto& c : cases) {
        auto cl = parse_command_line(c.args);
        EXPECT_EQ(cl.action, CommandLine::Action::Error) << c.args[0];
        EXPECT_NE(cl.error.find(c.expect), std::string::npos) << cl.error;
    }
}

TEST(CommandLine, HelpAndVersion) {
    EXPECT_EQ(parse_command_line({"--help"}).action, CommandLine::Action::Help);
    EXPECT_EQ(parse_command_line({"--port", "1", "--version"}).action,
              CommandLine::Action::Version);
    EXPECT_NE(rivet::server::usage().find("--workers"), std::string::npos);
}

TEST(CommandLine, VersionComesFromVersionHeader) {
    // --version wins wherever it stands, before a flag that would be an error.
    EXPECT_EQ(parse_command_line({"--version", "--bogus"}).action, CommandLine::Action::Version);
    const std::string numbers = std::to_string(RIVET_VERSION_MAJOR) + "." +
                                std::to_string(RIVET_VERSION_MINOR) + "." +
                                std::to_string(RIVET_VERSION_PATCH);
    EXPECT_EQ(std::string(RIVET_VERSION_STRING), numbers);
    EXPECT_EQ(rivet::server::version_line(), "rivet " + numbers + "\n");
}
