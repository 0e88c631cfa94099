// net::NotifySocket: sd_notify's datagram to a path or an abstract name, and the addresses it
// refuses; the receiving end is a socket of the test's.
#include "net/notify_socket.hpp"

#include <gtest/gtest.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <unistd.h>

#include <cstddef>
#include <cstring>
#include <string>

namespace rivet::net {
namespace {

// A bound datagram socket at `address` ('@': abstract), read with a bounded wait.
class Receiver {
public:
    explicit Receiver(const std::string& address) {
        fd_ = socket(AF_UNIX, SOCK_DGRAM | SOCK_CLOEXEC, 0);
        sockaddr_un a{};
        a.sun_family = AF_UNIX;
        std::memcpy(a.sun_path, address.data(), address.size());
        if (address[0] == '@') a.sun_path[0] = '\0';
        socklen_t size = socklen_t(offsetof(sockaddr_un, sun_path) + address.size());
        EXPECT_EQ(bind(fd_, reinterpret_cast<sockaddr*>(&a), size), 0) << std::strerror(errno);
        timeval wait{5, 0};
        setsockopt(fd_, SOL_SOCKET, SO_RCVTIMEO, &wait, sizeof wait);
    }
    ~Receiver() { close(fd_); }
    std::string next() {
        char buf[512];
        ssize_t n = recv(fd_, buf, sizeof buf, 0);
        return n < 0 ? "(nothing)" : std::string(buf, size_t(n));
    }

private:
    int fd_ = -1;
};

TEST(NotifySocket, SendsOneDatagramToAPath) {
    std::string path = ::testing::TempDir() + "notify-" + std::to_string(getpid()) + ".sock";
    unlink(path.c_str());
    Receiver receiver(path);
    std::string problem;
    NotifySocket s(path, problem);
    ASSERT_TRUE(problem.empty()) << problem;
    ASSERT_TRUE(s.is_open());
    EXPECT_EQ(s.send("READY=1\nSTATUS=serving"), "");
    EXPECT_EQ(receiver.next(), "READY=1\nSTATUS=serving");
    unlink(path.c_str());
}

TEST(NotifySocket, SendsToAnAbstractName) {
    std::string name = "@rivet-notify-test-" + std::to_string(getpid());
    Receiver receiver(name);
    std::string problem;
    NotifySocket s(name, problem);
    ASSERT_TRUE(s.is_open()) << problem;
    EXPECT_EQ(s.send("WATCHDOG=1"), "");
    EXPECT_EQ(receiver.next(), "WATCHDOG=1");
}

TEST(NotifySocket, WithoutAnAddressItIsClosedAndSendsNothing) {
    std::string problem;
    NotifySocket s("", problem);
    EXPECT_FALSE(s.is_open());
    EXPECT_TRUE(problem.empty());
    EXPECT_EQ(s.send("READY=1"), "");
}

TEST(NotifySocket, RefusesAddressesThatAreNoSocketName) {
    for (const std::string& bad : {std::string("relative/notify"), std::string(200, '/')}) {
        std::string problem;
        NotifySocket s(bad, problem);
        EXPECT_FALSE(s.is_open()) << bad;
        EXPECT_NE(problem.find("NOTIFY_SOCKET="), std::string::npos) << problem;
    }
}

TEST(NotifySocket, NobodyListeningIsAnErrorNotACrash) {
    std::string problem;
    NotifySocket s(::testing::TempDir() + "no-such-notify.sock", problem);
    ASSERT_TRUE(s.is_open()) << problem;
    EXPECT_NE(s.send("READY=1"), "");
}

}  // namespace
}  // namespace rivet::net
