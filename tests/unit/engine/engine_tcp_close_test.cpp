// Closing over real TCP (loopback): the last answer is sent with MSG_MORE so that it leaves with
// the FIN; it must still leave when input arrives between the read and the close.
#include <gtest/gtest.h>

#include <arpa/inet.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <sys/socket.h>
#include <unistd.h>

#include <cerrno>
#include <memory>
#include <string>
#include <system_error>
#include <thread>
#include <utility>

#include "engine_harness.hpp"

namespace rivet::engine::testing {
namespace {

// A connected TCP pair on loopback: {server end (non-blocking, as accept4 makes it), client end}.
std::pair<int, int> tcp_pair() {
    int l = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
    sockaddr_in a{};
    a.sin_family = AF_INET;
    a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    socklen_t len = sizeof a;
    if (l < 0 || bind(l, reinterpret_cast<sockaddr*>(&a), sizeof a) != 0 || listen(l, 4) != 0 ||
        getsockname(l, reinterpret_cast<sockaddr*>(&a), &len) != 0)
        throw std::system_error(errno, std::generic_category(), "loopback listener");
    int c = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
    if (c < 0 || connect(c, reinterpret_cast<sockaddr*>(&a), sizeof a) != 0)
        throw std::system_error(errno, std::generic_category(), "connect");
    int s = accept4(l, nullptr, nullptr, SOCK_NONBLOCK | SOCK_CLOEXEC);
    close(l);
    if (s < 0) throw std::system_error(errno, std::generic_category(), "accept4");
    int one = 1;
    setsockopt(s, IPPROTO_TCP, TCP_NODELAY, &one, sizeof one);  // as the listener gives it
    return {s, c};
}

// The client sends `first` before the engine adopts the connection (as with TCP_DEFER_ACCEPT,
// Connection::start() finds the request there).
std::unique_ptr<Client> connect_tcp(EngineHarness& h, std::string_view first) {
    auto [s, c] = tcp_pair();
    auto client = std::make_unique<Client>(c);
    client->send(first);
    std::this_thread::sleep_for(20ms);
    sockaddr_storage addr{};
    addr.ss_family = AF_INET;
    IoThread* io = &h.io();
    io->loop().post([io, s = s, addr] { io->adopt(s, addr); });
    return client;
}

TEST(EngineTcpClose, CloseAnswerLeavesThenEof) {
    EngineHarness h;
    auto c = connect_tcp(h, get("/a") + get("/b", "Connection: close\r\n"));
    auto got = c->read_responses(2);
    ASSERT_EQ(got.size(), 2u);
    EXPECT_EQ(got[1].field("Connection"), "close");
    EXPECT_TRUE(c->wait_eof());
}

TEST(EngineTcpClose, CloseAnswerLeavesWhenInputArrivesWhileTheHandlerRuns) {
    // The read that took the request emptied the socket, but the client pipelines another
    // request while the handler runs: close() then finds unread input and resets the
    // connection, which must not swallow the answer still held back by MSG_MORE.
    EngineHarness h({}, [](Exchange& ex) {
        if (ex.head().path == "/slow") std::this_thread::sleep_for(150ms);
        ex.respond(rivet::app::view_of(
            rivet::Response(200).text("answer " + std::string(ex.head().path))));
    });
    auto c = connect_tcp(h, get("/slow", "Connection: close\r\n"));
    std::this_thread::sleep_for(50ms);  // inside the handler
    c->send(get("/next"));
    auto got = c->read_responses(1);
    ASSERT_EQ(got.size(), 1u) << "received " << c->received().size() << " bytes";
    EXPECT_EQ(got[0].body, "answer /slow");
}

}  // namespace
}  // namespace rivet::engine::testing
