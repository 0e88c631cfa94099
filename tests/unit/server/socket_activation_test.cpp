// The systemd socket-activation protocol as rivet reads it: LISTEN_PID / LISTEN_FDS /
// LISTEN_FDNAMES, and the checks each inherited descriptor must pass.
#include "server/socket_activation.hpp"

#include <fcntl.h>
#include <gtest/gtest.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <unistd.h>

#include <cstdlib>

#include "net/socket.hpp"

namespace {

using rivet::server::ActivationEnv;
using rivet::server::check_listener;
using rivet::server::parse_activation;

constexpr pid_t kSelf = 4242;

TEST(SocketActivation, NothingWithoutListenFds) {
    std::string error;
    auto got = parse_activation({}, kSelf, error);
    EXPECT_TRUE(got.empty());
    EXPECT_EQ(error, "");
}

TEST(SocketActivation, AnotherProcessesVariablesAreIgnored) {
    std::string error;
    auto got = parse_activation({"4243", "2", std::nullopt}, kSelf, error);
    EXPECT_TRUE(got.empty());
    EXPECT_EQ(error, "");
}

TEST(SocketActivation, UnnamedDescriptorsAreHttpFromThree) {
    std::string error;
    auto got = parse_activation({"4242", "3", std::nullopt}, kSelf, error);
    EXPECT_EQ(error, "");
    EXPECT_EQ(got.http, (std::vector<int>{3, 4, 5}));
    EXPECT_TRUE(got.admin.empty());
}

TEST(SocketActivation, AdminByNameEverythingElseHttp) {
    std::string error;
    // systemd names a socket after its unit unless FileDescriptorName= says otherwise.
    auto got = parse_activation({"4242", "4", "http:admin:rivet.socket:http"}, kSelf, error);
    EXPECT_EQ(error, "");
    EXPECT_EQ(got.http, (std::vector<int>{3, 5, 6}));
    EXPECT_EQ(got.admin, (std::vector<int>{4}));
}

TEST(SocketActivation, HttpsByName) {
    std::string error;
    auto got = parse_activation({"4242", "5", "http:https:admin:https:rivet.socket"}, kSelf, error);
    EXPECT_EQ(error, "");
    EXPECT_EQ(got.http, (std::vector<int>{3, 7}));
    EXPECT_EQ(got.admin, (std::vector<int>{5}));
    EXPECT_EQ(got.https, (std::vector<int>{4, 6}));
    EXPECT_EQ(got.size(), 5u);
    EXPECT_FALSE(got.empty());
}

TEST(SocketActivation, HandedOverNamesReadBackTheSame) {
    // What an upgrade puts in LISTEN_FDNAMES (listen_fdnames), for the descriptors it moves to
    // 3, 4, ... in the order http, admin, https.
    rivet::server::InheritedListeners sent{{40, 41}, {42}, {43, 44}};
    EXPECT_EQ(rivet::server::listen_fdnames(sent), "http:http:admin:https:https");
    std::string error;
    auto got = parse_activation({"4242", "5", rivet::server::listen_fdnames(sent)}, kSelf, error);
    EXPECT_EQ(error, "");
    EXPECT_EQ(got.http, (std::vector<int>{3, 4}));
    EXPECT_EQ(got.admin, (std::vector<int>{5}));
    EXPECT_EQ(got.https, (std::vector<int>{6, 7}));
    EXPECT_EQ(rivet::server::listen_fdnames({{40}, {}, {}}), "http");
    EXPECT_EQ(rivet::server::listen_fdnames({{40}, {}, {41}}), "http:https");
}

TEST(SocketActivation, ZeroDescriptorsIsNothing) {
    std::string error;
    auto got = parse_activation({"4242", "0", std::nullopt}, kSelf, error);
    EXPECT_TRUE(got.empty());
    EXPECT_EQ(error, "");
}

TEST(SocketActivation, MalformedVariablesAreRefused) {
    struct Case {
        ActivationEnv env;
        const char* says;
    } cases[] = {
        {{std::nullopt, "1", std::nullopt}, "LISTEN_PID is not"},
        {{"", "1", std::nullopt}, "LISTEN_PID='' is not a process id"},
        {{"abc", "1", std::nullopt}, "LISTEN_PID='abc'"},
        {{"0", "1", std::nullopt}, "LISTEN_PID='0'"},
        {{"4242x", "1", std::nullopt}, "LISTEN_PID='4242x'"},
        {{"4242", "", std::nullopt}, "LISTEN_FDS=''"},
        {{"4242", "-1", std::nullopt}, "LISTEN_FDS='-1'"},
        {{"4242", "1 ", std::nullopt}, "LISTEN_FDS='1 '"},
        {{"4242", "1025", std::nullopt},
         "LISTEN_FDS='1025' is not a descriptor count from 0 to 1024"},
        {{"4242", "2", "http"}, "LISTEN_FDNAMES names 1 descriptors but LISTEN_FDS says 2"},
        {{"4242", "1", "http:admin"}, "LISTEN_FDNAMES names 2 descriptors but LISTEN_FDS says 1"},
    };
    for (const auto& c : cases) {
        std::string error;
        auto got = parse_activation(c.env, kSelf, error);
        EXPECT_TRUE(got.empty()) << c.says;
        EXPECT_NE(error.find(c.says), std::string::npos) << "error: " << error;
    }
    std::string error;  // the largest count allowed passes
    EXPECT_EQ(parse_activation({"4242", "1024", std::nullopt}, kSelf, error).http.size(), 1024u);
    EXPECT_EQ(error, "");
}

TEST(SocketActivation, CheckListenerAcceptsListeningTcp) {
    int v4 = rivet::net::listen_tcp("127.0.0.1", 0, false, 4);
    int v6 = socket(AF_INET6, SOCK_STREAM, 0);
    sockaddr_in6 a{};
    a.sin6_family = AF_INET6;
    a.sin6_addr = in6addr_loopback;
    bool have_v6 = bind(v6, reinterpret_cast<sockaddr*>(&a), sizeof a) == 0 && listen(v6, 4) == 0;
    EXPECT_EQ(check_listener(v4), "");
    if (have_v6) {
        EXPECT_EQ(check_listener(v6), "");
    }
    close(v4);
    close(v6);
}

TEST(SocketActivation, CheckListenerRefusesWhatCannotBeServed) {
    int unbound = socket(AF_INET, SOCK_STREAM, 0);
    EXPECT_EQ(check_listener(unbound), "descriptor " + std::to_string(unbound) +
                                           " is not listening (listen() was not called on it)");
    int udp = socket(AF_INET, SOCK_DGRAM, 0);
    EXPECT_EQ(check_listener(udp),
              "descriptor " + std::to_string(udp) + " is not a TCP (stream) socket");
    int unix_socket = socket(AF_UNIX, SOCK_STREAM, 0);
    EXPECT_EQ(check_listener(unix_socket),
              "descriptor " + std::to_string(unix_socket) + " is not an IPv4 or IPv6 socket");
    int pipe_fds[2];
    ASSERT_EQ(pipe(pipe_fds), 0);
    EXPECT_EQ(check_listener(pipe_fds[0]),
              "descriptor " + std::to_string(pipe_fds[0]) + " is not a socket");
    for (int fd : {unbound, udp, unix_socket, pipe_fds[0], pipe_fds[1]}) close(fd);
    EXPECT_EQ(check_listener(pipe_fds[0]),
              "descriptor " + std::to_string(pipe_fds[0]) + ": Bad file descriptor");
}

// The real environment, with descriptor 3 lent for the test: the variables leave the
// environment, the socket becomes close-on-exec, and a bad descriptor is refused by number.
class TakeInherited : public ::testing::Test {
protected:
    void SetUp() override { saved_ = fcntl(3, F_DUPFD_CLOEXEC, 10); }  // -1: 3 was free
    void TearDown() override {
        if (saved_ >= 0) {
            dup2(saved_, 3);
            close(saved_);
        } else {
            close(3);
        }
        for (const char* v : {"LISTEN_PID", "LISTEN_FDS", "LISTEN_FDNAMES"}) unsetenv(v);
    }
    void put_on_three(int fd) {
        ASSERT_EQ(dup2(fd, 3), 3);
        if (fd != 3) close(fd);
        setenv("LISTEN_PID", std::to_string(getpid()).c_str(), 1);
        setenv("LISTEN_FDS", "1", 1);
    }
    int saved_ = -1;
};

TEST_F(TakeInherited, ListeningSocketIsTakenAndTheVariablesCleared) {
    put_on_three(rivet::net::listen_tcp("127.0.0.1", 0, true, 4));
    setenv("LISTEN_FDNAMES", "admin", 1);
    ASSERT_EQ(fcntl(3, F_SETFD, 0), 0);  // as exec leaves it
    std::string error;
    auto got = rivet::server::take_inherited_listeners(error);
    EXPECT_EQ(error, "");
    EXPECT_EQ(got.admin, (std::vector<int>{3}));
    EXPECT_TRUE(got.http.empty());
    EXPECT_EQ(fcntl(3, F_GETFD) & FD_CLOEXEC, FD_CLOEXEC);
    for (const char* v : {"LISTEN_PID", "LISTEN_FDS", "LISTEN_FDNAMES"})
        EXPECT_EQ(std::getenv(v), nullptr) << v;
}

TEST_F(TakeInherited, BadDescriptorIsRefusedByNumber) {
    int pipe_fds[2];
    ASSERT_EQ(pipe(pipe_fds), 0);
    close(pipe_fds[1]);
    put_on_three(pipe_fds[0]);
    std::string error;
    auto got = rivet::server::take_inherited_listeners(error);
    EXPECT_TRUE(got.empty());
    EXPECT_EQ(error, "inherited listening sockets (LISTEN_FDS): descriptor 3 is not a socket");
    EXPECT_EQ(std::getenv("LISTEN_FDS"), nullptr);
}

TEST_F(TakeInherited, MalformedVariablesAreNamedInTheError) {
    setenv("LISTEN_PID", std::to_string(getpid()).c_str(), 1);
    setenv("LISTEN_FDS", "two", 1);
    std::string error;
    EXPECT_TRUE(rivet::server::take_inherited_listeners(error).empty());
    EXPECT_EQ(error,
              "inherited listening sockets: LISTEN_FDS='two' is not a descriptor count from 0 to "
              "1024");
}

}  // namespace
