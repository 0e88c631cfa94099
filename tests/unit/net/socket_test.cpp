#include "net/socket.hpp"

#include <arpa/inet.h>
#include <netinet/tcp.h>
#include <poll.h>
#include <unistd.h>

#include <gtest/gtest.h>

namespace {

int connect_to(uint16_t port) {
    int fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
    sockaddr_in a{};
    a.sin_family = AF_INET;
    a.sin_port = htons(port);
    a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    EXPECT_EQ(connect(fd, reinterpret_cast<sockaddr*>(&a), sizeof a), 0);
    return fd;
}

int nodelay(int fd) {
    int v = -1;
    socklen_t len = sizeof v;
    EXPECT_EQ(getsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &v, &len), 0);
    return v;
}

}  // namespace

// The listener sets TCP_NODELAY once and accept_connection relies on Linux copying it to each
// accepted socket: small answers must not wait for Nagle's algorithm.
TEST(Socket, AcceptedConnectionsInheritNoDelay) {
    int lfd = rivet::net::listen_tcp("127.0.0.1", 0, false, 16);
    EXPECT_NE(nodelay(lfd), 0);
    int client = connect_to(rivet::net::local_port(lfd));
    ASSERT_EQ(write(client, "G", 1), 1);  // deferred accept: a connection comes with its data
    pollfd p{lfd, POLLIN, 0};
    ASSERT_EQ(poll(&p, 1, 5000), 1);
    rivet::net::PeerAddress peer;
    int fd = rivet::net::accept_connection(lfd, &peer);
    ASSERT_GE(fd, 0);
    EXPECT_NE(nodelay(fd), 0);
    EXPECT_EQ(peer.to_string(), "127.0.0.1");
    close(fd);
    close(client);
    close(lfd);
}

// The listener defers accepting until a connection's first bytes arrive (TCP_DEFER_ACCEPT), so
// the loop reads the request right after accept() instead of waiting for a second wake-up.
TEST(Socket, AcceptWaitsForTheFirstBytes) {
    int lfd = rivet::net::listen_tcp("127.0.0.1", 0, false, 16);
    int v = 0;
    socklen_t len = sizeof v;
    ASSERT_EQ(getsockopt(lfd, IPPROTO_TCP, TCP_DEFER_ACCEPT, &v, &len), 0);
    EXPECT_GT(v, 0);
    int client = connect_to(rivet::net::local_port(lfd));
    pollfd p{lfd, POLLIN, 0};
    EXPECT_EQ(poll(&p, 1, 100), 0);  // connected, silent: not yet handed to accept()
    ASSERT_EQ(write(client, "GET", 3), 3);
    ASSERT_EQ(poll(&p, 1, 5000), 1);
    rivet::net::PeerAddress peer;
    int fd = rivet::net::accept_connection(lfd, &peer);
    ASSERT_GE(fd, 0);
    char buf[8];
    EXPECT_EQ(read(fd, buf, sizeof buf), 3);  // the bytes are there at accept
    close(fd);
    close(client);
    close(lfd);
}

TEST(Socket, AcceptWithNothingPendingIsEagain) {
    int lfd = rivet::net::listen_tcp("127.0.0.1", 0, false, 16);
    rivet::net::PeerAddress peer;
    EXPECT_EQ(rivet::net::accept_connection(lfd, &peer), -1);
    EXPECT_EQ(errno, EAGAIN);
    close(lfd);
}
