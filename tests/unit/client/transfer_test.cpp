// client::Transfer on a real net::Loop against a scripted server on 127.0.0.1 (a thread that
// accepts, reads each request head and writes the scripted answer): a head trickled in byte by
// byte, interim responses skipped, the pool's reuse and its refusal of a connection with stray
// bytes, the size bound on a chunked body, and an abandoned Transfer closing its connection.
// Also URLs: parse_url and resolve_location.
#include "client/transfer.hpp"

#include <gtest/gtest.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

#include <atomic>
#include <cerrno>
#include <chrono>
#include <functional>
#include <future>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include "../net/loop_runner.hpp"
#include "client/url.hpp"
#include "net/loop.hpp"

namespace rivet::client {
namespace {

using namespace std::chrono_literals;

using net::testing::LoopRunner;

// Declared before the LoopRunner in a test, so that the loop thread (and its pool of idle
// connections, thread-local) ends first and no connection holds the server's thread in recv.
// Accepts connections one after another; for each request head read, calls `answer(index of
// the request on this connection, connection number)` and writes what it returns, byte by byte
// when `trickle`. An answer ending in "<close>" closes the connection after it.
class ScriptedServer {
public:
    using Answer = std::function<std::string(int request, int connection)>;
    explicit ScriptedServer(Answer answer, bool trickle = false)
        : answer_(std::move(answer)), trickle_(trickle) {
        fd_ = ::socket(AF_INET, SOCK_STREAM, 0);
        sockaddr_in a{};
        a.sin_family = AF_INET;
        a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
        EXPECT_EQ(::bind(fd_, reinterpret_cast<sockaddr*>(&a), sizeof a), 0);
        socklen_t len = sizeof a;
        ::getsockname(fd_, reinterpret_cast<sockaddr*>(&a), &len);
        port = ntohs(a.sin_port);
        ::listen(fd_, 16);
        thread_ = std::thread([this] { serve(); });
    }
    ~ScriptedServer() {
        ::shutdown(fd_, SHUT_RDWR);
        ::close(fd_);
        thread_.join();
    }
    std::string url(const std::string& path = "/") const {
        return "http://127.0.0.1:" + std::to_string(port) + path;
    }
    uint16_t port = 0;
    std::atomic<int> connections{0};
    // Set when a connection ends by the client's close (FIN or RST).
    std::promise<void> peer_closed;

private:
    void serve() {
        for (;;) {
            const int c = ::accept(fd_, nullptr, nullptr);
            if (c < 0) return;
            const int conn = connections++;
            std::string buf;
            char tmp[4096];
            for (int req = 0;; ++req) {
                size_t end;
                while ((end = buf.find("\r\n\r\n")) == std::string::npos) {
                    const ssize_t n = ::recv(c, tmp, sizeof tmp, 0);
                    if (n <= 0) {
                        // The client's close is a FIN, or a RST when it closes with our answer
                        // still unread in its socket (a busy machine's loop had not read it yet).
                        const bool client_closed = n == 0 || errno == ECONNRESET;
                        if (client_closed && !closed_reported_.exchange(true))
                            peer_closed.set_value();
                        ::close(c);
                        goto next;
                    }
                    buf.append(tmp, size_t(n));
                }
                buf.erase(0, end + 4);
                std::string out = answer_(req, conn);
                const bool close_after = out.ends_with("<close>");
                if (close_after) out.resize(out.size() - 7);
                if (trickle_) {
                    for (char ch : out) ::send(c, &ch, 1, MSG_NOSIGNAL);
                } else {
                    ::send(c, out.data(), out.size(), MSG_NOSIGNAL);
                }
                if (close_after) {
                    ::close(c);
                    goto next;
                }
            }
        next:;
        }
    }
    Answer answer_;
    bool trickle_;
    int fd_ = -1;
    std::thread thread_;
    std::atomic<bool> closed_reported_{false};
};

// Runs one request to its outcome.
Outcome run(LoopRunner& r, const std::string& url, Options options = {}) {
    auto p = std::make_shared<std::promise<Outcome>>();
    auto f = p->get_future();
    auto holder = std::make_shared<std::unique_ptr<Transfer>>();
    r.on_loop([&, p, holder] {
        Request req;
        req.url = *parse_url(url);
        req.options = options;
        *holder = Transfer::start(r.loop, std::move(req), [p](Outcome o) { p->set_value(o); });
    });
    EXPECT_EQ(f.wait_for(20s), std::future_status::ready);
    Outcome o = f.get();
    r.on_loop([holder] { holder->reset(); });
    return o;
}

TEST(ClientTransfer, HeadTrickledByteByByteAndInterimResponsesSkipped) {
    ScriptedServer server(
        [](int, int) {
            return std::string(
                "HTTP/1.1 100 Continue\r\n\r\nHTTP/1.1 103 Early Hints\r\nLink: x\r\n"
                "\r\nHTTP/1.1 200 OK\r\nContent-Length: 5\r\nX-A: b\r\n\r\nhello");
        },
        true);
    LoopRunner r;
    Outcome o = run(r, server.url());
    ASSERT_TRUE(o.response) << o.error->message;
    EXPECT_EQ(o.response->status, 200);
    EXPECT_EQ(o.response->body, "hello");
    ASSERT_EQ(o.response->headers.size(), 2u);
    EXPECT_EQ(o.response->headers[1], (std::pair<std::string, std::string>("X-A", "b")));
}

TEST(ClientTransfer, KeptAliveConnectionIsReusedButNotOneWithStrayBytes) {
    ScriptedServer server([](int req, int) {
        if (req == 1) return std::string("HTTP/1.1 200 OK\r\nContent-Length: 1\r\n\r\nbSTRAY");
        return std::string("HTTP/1.1 200 OK\r\nContent-Length: 1\r\n\r\na");
    });
    LoopRunner r;
    const PoolStats before = r.on_loop([] { return pool_stats(); });
    Outcome a = run(r, server.url());
    Outcome b = run(r, server.url());
    Outcome c = run(r, server.url());
    ASSERT_TRUE(a.response && b.response && c.response);
    EXPECT_FALSE(a.response->reused);
    EXPECT_TRUE(b.response->reused);
    EXPECT_EQ(b.response->body, "b") << "the stray bytes are not the body";
    EXPECT_FALSE(c.response->reused) << "a connection with bytes after its answer is not pooled";
    const PoolStats after = r.on_loop([] { return pool_stats(); });
    EXPECT_EQ(after.opened - before.opened, 2u);
    EXPECT_EQ(server.connections.load(), 2);
}

TEST(ClientTransfer, ReusedConnectionClosedBeforeAnAnswerIsRetriedOnceOnANewOne) {
    // The server reads the second request on the first connection and closes it unanswered, as
    // a server closing an idle connection just as a request arrives does.
    ScriptedServer server([](int req, int conn) {
        if (conn == 0 && req == 1) return std::string("<close>");
        return std::string("HTTP/1.1 200 OK\r\nContent-Length: 2\r\n\r\nok");
    });
    LoopRunner r;
    Outcome a = run(r, server.url());
    Outcome b = run(r, server.url());
    ASSERT_TRUE(a.response && b.response) << (b.error ? b.error->message : "");
    EXPECT_EQ(b.response->body, "ok");
    EXPECT_FALSE(b.response->reused) << "answered on the new connection";
    EXPECT_EQ(server.connections.load(), 2);
}

TEST(ClientTransfer, AServerSpeakingAnotherProtocolIsRefusedWithoutWaitingForAnEmptyLine) {
    ScriptedServer server([](int, int) { return std::string("SSH-2.0-OpenSSH_9.2\r\n"); });
    LoopRunner r;
    Options o;
    o.total_timeout_ms = 60'000;  // the connection stays open: only the parser can end this
    const auto t0 = std::chrono::steady_clock::now();
    Outcome out = run(r, server.url(), o);
    ASSERT_TRUE(out.error);
    EXPECT_EQ(out.error->kind, ErrorKind::Malformed) << out.error->message;
    EXPECT_LT(std::chrono::steady_clock::now() - t0, 20s);
}

TEST(ClientTransfer, ChunkedBodyOverTheBoundIsTooLarge) {
    ScriptedServer server([](int, int) {
        std::string out = "HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n";
        for (int i = 0; i < 10; ++i) out += "400\r\n" + std::string(1024, 'x') + "\r\n";
        return out + "0\r\n\r\n";
    });
    LoopRunner r;
    Options small;
    small.max_response_bytes = 5000;
    Outcome o = run(r, server.url(), small);
    ASSERT_TRUE(o.error);
    EXPECT_EQ(o.error->kind, ErrorKind::TooLarge) << o.error->message;
    Options enough;
    enough.max_response_bytes = 10240;
    o = run(r, server.url(), enough);
    ASSERT_TRUE(o.response) << o.error->message;
    EXPECT_EQ(o.response->body.size(), 10240u);
}

TEST(ClientTransfer, AbandonedTransferClosesItsConnection) {
    ScriptedServer server([](int, int) {
        return std::string("HTTP/1.1 200 OK\r\nContent-Length: 100\r\n\r\npart");  // never ends
    });
    LoopRunner r;
    auto holder = std::make_shared<std::unique_ptr<Transfer>>();
    std::atomic<bool> called{false};
    r.on_loop([&] {
        Request req;
        req.url = *parse_url(server.url());
        *holder = Transfer::start(r.loop, std::move(req), [&](Outcome) { called = true; });
    });
    // Once the server has the connection, the caller gives up.
    for (int i = 0; i < 2000 && server.connections.load() == 0; ++i)
        std::this_thread::sleep_for(5ms);
    r.on_loop([holder] { holder->reset(); });
    EXPECT_EQ(server.peer_closed.get_future().wait_for(10s), std::future_status::ready);
    EXPECT_FALSE(called.load()) << "no outcome after the owner destroyed the Transfer";
    EXPECT_EQ(r.on_loop([] { return pool_stats().idle; }), 0u);
}

TEST(ClientUrl, ParsesWhatCanBeFetchedAndRefusesTheRest) {
    auto u = parse_url("HTTPS://Example.com:8443/a/b?c=d#frag");
    ASSERT_TRUE(u);
    EXPECT_TRUE(u->tls);
    EXPECT_EQ(u->host, "Example.com");
    EXPECT_EQ(u->port, 8443);
    EXPECT_EQ(u->target, "/a/b?c=d");
    EXPECT_EQ(u->authority, "Example.com:8443");
    u = parse_url("http://[::1]/");
    ASSERT_TRUE(u);
    EXPECT_EQ(u->host, "::1");
    EXPECT_EQ(u->port, 80);
    EXPECT_EQ(u->authority, "[::1]");
    u = parse_url("http://h?q");
    ASSERT_TRUE(u);
    EXPECT_EQ(u->target, "/?q");
    for (const char* bad :
         {"ftp://h/", "http://", "http://u:p@h/", "http://h:0/", "http://h:70000/", "http://h:8x/",
          "http://h h/", "http://h/a b", "http://[::1/", "//h/", "http://h\r\n/"})
        EXPECT_FALSE(parse_url(bad)) << bad;
}

TEST(ClientUrl, ResolvesLocations) {
    const Url base = *parse_url("https://a.test/x/y?z");
    EXPECT_EQ(resolve_location(base, "/p")->target, "/p");
    EXPECT_EQ(resolve_location(base, "q")->target, "/x/q");
    auto other = resolve_location(base, "//b.test/r");
    ASSERT_TRUE(other);
    EXPECT_TRUE(other->tls);
    EXPECT_EQ(other->host, "b.test");
    other = resolve_location(base, "http://c.test:81/");
    ASSERT_TRUE(other);
    EXPECT_FALSE(other->tls);
    EXPECT_EQ(other->port, 81);
}

}  // namespace
}  // namespace rivet::client
