// A child forked by anything in the process (an in-place upgrade, a handler's system()) holds
// copies of every socket until it execs: closing a connection then leaves its epoll registration
// alive, and the loop would report events for a freed Connection. Connections leave epoll
// before they close.
#include <gtest/gtest.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cstring>
#include <filesystem>
#include <fstream>
#include <string>

#include "engine_harness.hpp"

namespace rivet::engine::testing {
namespace {

// Registrations in every epoll instance of this process ("tfd:" lines of their fdinfo).
size_t epoll_registrations() {
    size_t n = 0;
    for (const auto& entry : std::filesystem::directory_iterator("/proc/self/fd")) {
        std::error_code ec;
        auto target = std::filesystem::read_symlink(entry.path(), ec);
        if (ec || target.string() != "anon_inode:[eventpoll]") continue;
        std::ifstream info("/proc/self/fdinfo/" + entry.path().filename().string());
        for (std::string line; std::getline(info, line);)
            if (line.rfind("tfd:", 0) == 0) ++n;
    }
    return n;
}

TEST(EngineFork, ConnectionClosedWhileAChildHoldsItsSocketLeavesEpoll) {
    EngineHarness h;
    auto c = h.connect();
    c->send(get("/1"));
    ASSERT_EQ(c->read_responses(1).size(), 1u);
    ASSERT_TRUE(h.sync());
    const size_t before = epoll_registrations();
    pid_t child = fork();
    ASSERT_GE(child, 0) << std::strerror(errno);
    if (child == 0) {  // holds the copies, as an upgrade's child does before it execs
        alarm(10);     // never outlives a test that failed before killing it
        pause();
        _exit(0);
    }
    c->send(get("/2", "Connection: close\r\n"));
    ASSERT_EQ(c->read_responses(1).size(), 1u);
    EXPECT_TRUE(c->wait_eof(1000ms));
    ASSERT_TRUE(h.sync());
    // Before the fix the count stayed: the closed socket was still watched, for a Connection
    // freed at the end of that turn.
    EXPECT_EQ(epoll_registrations(), before - 1);
    c->send("more bytes for the closed connection");  // would reach the freed Connection
    EXPECT_TRUE(h.sync());
    kill(child, SIGKILL);
    waitpid(child, nullptr, 0);
}

}  // namespace
}  // namespace rivet::engine::testing
