#include "net/socket.hpp"

#include <arpa/inet.h>
#include <netinet/tcp.h>
#include <poll.h>
#include <unistd.h>

#include <gtest/gtest.h>

#include <atomic>
#include <stdexcept>
#include <thread>

namespace {

sockaddr_in loopback(uint16_t port) {
    sockaddr_in a{};
    a.sin_family = AF_INET;
    a.sin_port = htons(port);
    a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    return a;
}

int connect_to(uint16_t port) {
    int fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
    const sockaddr_in a = loopback(port);
    EXPECT_EQ(connect(fd, reinterpret_cast<const sockaddr*>(&a), sizeof a), 0);
    return fd;
}

int nodelay(int fd) {
    int v = -1;
    socklen_t len = sizeof v;
    EXPECT_EQ(getsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &v, &len), 0);
    return v;
}

// Whether a connection to 127.0.0.1:port is taken (a listener's queue took it), leaving out a
// socket that the kernel connected to itself (its own port chosen as the source: nothing was
// listening then).
bool connection_taken(uint16_t port) {
    int fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
    const sockaddr_in a = loopback(port);
    const bool connected = connect(fd, reinterpret_cast<const sockaddr*>(&a), sizeof a) == 0;
    const bool to_itself = connected && rivet::net::local_port(fd) == port;
    close(fd);
    return connected && !to_itself;
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

// Claiming the port must not listen on it, even for an instant: a client that connected then
// (a health check, a load generator polling for the port) sat in a queue that the claim's
// close() then reset, where it should have been refused and tried again. Clients connect
// without pause while the port is claimed over and over; none may get in.
TEST(Socket, ClaimingAPortTakesNoConnection) {
    const uint16_t port = rivet::net::claim_port("127.0.0.1", 0);
    std::atomic<bool> done{false};
    std::atomic<int> taken{0}, tries{0};
    std::thread client([&] {
        while (!done.load()) {
            if (connection_taken(port)) taken.fetch_add(1);
            tries.fetch_add(1);
        }
    });
    for (int i = 0; i < 5000 || tries.load() < 5000; ++i)
        EXPECT_EQ(rivet::net::claim_port("127.0.0.1", port), port);
    done = true;
    client.join();
    EXPECT_EQ(taken.load(), 0) << "of " << tries.load() << " connections";
}

// What the claim is for: a port that another listener holds, with SO_REUSEPORT or without,
// is refused, so that our own SO_REUSEPORT sockets never quietly share another server's.
TEST(Socket, ClaimingAPortSomeoneListensOnFails) {
    for (bool reuse_port : {false, true}) {
        int held = rivet::net::listen_tcp("127.0.0.1", 0, reuse_port, 16);
        const uint16_t port = rivet::net::local_port(held);
        EXPECT_THROW(rivet::net::claim_port("127.0.0.1", port), std::runtime_error) << reuse_port;
        close(held);
        EXPECT_EQ(rivet::net::claim_port("127.0.0.1", port), port) << reuse_port;
    }
}
