// What --check-config catches that each setting allows alone but would fail at start.
#include "server/startup_check.hpp"

#include <gtest/gtest.h>

#include "server/command_line.hpp"

using rivet::server::CommandLine;
using rivet::server::Config;
using rivet::server::default_config;
using rivet::server::parse_command_line;

TEST(StartupCheck, AdminPortOnTheMainPortIsRefused) {
    auto cl = parse_command_line({"--port", "9000", "--admin-port", "9000"});
    ASSERT_EQ(cl.action, CommandLine::Action::Serve) << cl.error;
    auto problems = rivet::server::check_startup(cl);
    ASSERT_EQ(problems.size(), 1u);
    EXPECT_EQ(problems[0],
              "metrics.admin_port: the admin port 9000 is the plain HTTP port too "
              "(--admin-port, server.port)");
    // Another address than the main listener's (a specific one) is another listener.
    Config c = default_config();
    c.run.host = "192.0.2.1";
    c.run.port = c.run.ops.admin.admin_port = 9000;
    EXPECT_TRUE(rivet::server::check_startup(c).empty());
    c.run.host = "::";
    EXPECT_EQ(rivet::server::check_startup(c).size(), 1u);
    EXPECT_TRUE(rivet::server::check_startup(default_config()).empty());
}

TEST(StartupCheck, ALogInADirectoryThatDoesNotExistIsRefused) {
    Config c = default_config();
    c.run.ops.log.access_log = "/nonexistent-rivet-dir/access.log";
    auto problems = rivet::server::check_startup(c);
    ASSERT_EQ(problems.size(), 1u);
    EXPECT_EQ(problems[0],
              "logging.access_log (--access-log): cannot create "
              "/nonexistent-rivet-dir/access.log: /nonexistent-rivet-dir: No such file or "
              "directory");
    c.run.ops.log.access_log = ::testing::TempDir() + "access.log";
    c.run.ops.log.error_log = ::testing::TempDir();  // a directory
    c.pid_file = "relative-dir-that-is-not-there/rivet.pid";
    problems = rivet::server::check_startup(c);
    ASSERT_EQ(problems.size(), 2u);
    EXPECT_NE(problems[0].find("logging.error_log (--error-log): "), std::string::npos);
    EXPECT_NE(problems[0].find("is a directory"), std::string::npos) << problems[0];
    EXPECT_NE(problems[1].find("server.pid_file (--pid-file): cannot create"), std::string::npos);
    for (const char* special : {"off", "stdout", "stderr", ""}) {
        c = default_config();
        c.run.ops.log.access_log = special;
        EXPECT_TRUE(rivet::server::check_startup(c).empty()) << special;
    }
}
