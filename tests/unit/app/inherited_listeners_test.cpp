// An App serving listening sockets it was handed (RunOptions::listen_fds) instead of binding:
// every socket is accepted from, whatever the number of loops, and the sockets come back out of
// listening_fds() for the next process.
#include <rivet/rivet.hpp>

#include <fcntl.h>
#include <gtest/gtest.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <unistd.h>

#include <set>
#include <stdexcept>

#include "net/socket.hpp"
#include "raw_client.hpp"

namespace {

using rivet::test::exchange;

rivet::RunOptions options(unsigned threads, std::vector<int> fds) {
    rivet::RunOptions o;
    o.host = "192.0.2.1";  // never bound: the inherited sockets are served instead
    o.port = 1;
    o.threads = threads;
    o.workers = 1;
    o.quiet = true;
    o.listen_fds = std::move(fds);
    return o;
}

bool answers(uint16_t port) {
    std::string got = exchange(port, "GET /x HTTP/1.1\r\nHost: t\r\nConnection: close\r\n\r\n");
    return got.starts_with("HTTP/1.1 200") && got.ends_with("x");
}

class InheritedListeners : public ::testing::Test {
protected:
    void SetUp() override {
        app_.get("/x", [](rivet::Request&, rivet::Response& res) { res.text("x"); });
    }
    void TearDown() override { app_.stop(); }
    rivet::App app_;
};

// Three sockets, each on its own port, one loop: a socket left unaccepted would hold (and at
// its close reset) the connections queued on it.
TEST_F(InheritedListeners, MoreSocketsThanLoopsAreAllServed) {
    std::vector<int> fds;
    for (int i = 0; i < 3; ++i) fds.push_back(rivet::net::listen_tcp("127.0.0.1", 0, true, 16));
    uint16_t port = app_.start(options(1, fds));
    EXPECT_EQ(port, rivet::net::local_port(fds[0]));
    EXPECT_EQ(app_.listening_fds(), fds);
    for (int fd : fds) EXPECT_TRUE(answers(rivet::net::local_port(fd))) << fd;
}

// One SO_REUSEPORT socket, three loops: the other two open sockets of their own on its port.
TEST_F(InheritedListeners, FewerSocketsThanLoopsAreJoinedOnTheSamePort) {
    int fd = rivet::net::listen_tcp("127.0.0.1", 0, true, 16);
    uint16_t port = app_.start(options(3, {fd}));
    auto all = app_.listening_fds();
    ASSERT_EQ(all.size(), 3u);
    EXPECT_EQ(all[0], fd);
    for (int l : all) EXPECT_EQ(rivet::net::local_port(l), port);
    // New sockets in the SO_REUSEPORT group, not copies of the first descriptor (the fallback
    // for a socket without SO_REUSEPORT): a copy is the same socket, the same inode.
    std::set<ino_t> sockets;
    for (int l : all) {
        struct stat st {};
        ASSERT_EQ(fstat(l, &st), 0);
        sockets.insert(st.st_ino);
    }
    EXPECT_EQ(sockets.size(), 3u);
    for (int i = 0; i < 20; ++i) ASSERT_TRUE(answers(port)) << i;
}

// A socket as systemd makes it by default: blocking, without SO_REUSEPORT. The other loops
// share its queue, and none of them blocks in accept().
TEST_F(InheritedListeners, BlockingSocketWithoutReusePortIsShared) {
    int fd = socket(AF_INET, SOCK_STREAM, 0);
    sockaddr_in a{};
    a.sin_family = AF_INET;
    a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    ASSERT_EQ(bind(fd, reinterpret_cast<sockaddr*>(&a), sizeof a), 0);
    ASSERT_EQ(listen(fd, 16), 0);
    uint16_t port = app_.start(options(2, {fd}));
    EXPECT_EQ(app_.listening_fds().size(), 2u);
    for (int i = 0; i < 20; ++i) ASSERT_TRUE(answers(port)) << i;
    app_.stop();  // both loops drain and close their descriptors without blocking in accept
    EXPECT_EQ(fcntl(fd, F_GETFD), -1);  // closed: the App owned it
}

TEST_F(InheritedListeners, AdminSocketsNeedAnAdminPort) {
    int fd = rivet::net::listen_tcp("127.0.0.1", 0, true, 16);
    auto o = options(1, {});
    o.host = "127.0.0.1";
    o.port = 0;
    o.admin_listen_fds = {fd};
    EXPECT_THROW(app_.start(o), std::invalid_argument);
    close(fd);
    // With one, the admin endpoints answer on the inherited socket, not on admin_port.
    int admin = rivet::net::listen_tcp("127.0.0.1", 0, true, 16);
    o.admin_listen_fds = {admin};
    o.ops.admin.admin_port = 1;  // unused: the socket's own port counts
    o.ops.admin.health = true;
    app_.start(o);
    EXPECT_EQ(app_.admin_listening_fds(), (std::vector<int>{admin}));
    std::string got = exchange(rivet::net::local_port(admin),
                               "GET /healthz HTTP/1.1\r\nHost: t\r\nConnection: close\r\n\r\n");
    EXPECT_TRUE(got.starts_with("HTTP/1.1 200")) << got;
}

}  // namespace
