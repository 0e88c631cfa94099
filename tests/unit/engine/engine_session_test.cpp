// Sessions on the connection: an HTTP/1.1 answer hands the connection to another protocol
// (Reply::then), which starts with exactly the bytes read after the request; the PROXY header is
// read before the transport, so a TLS listener takes one too.
#include <arpa/inet.h>
#include <gtest/gtest.h>
#include <netinet/in.h>

#include <memory>
#include <mutex>
#include <string>

#include "engine/connection.hpp"
#include "engine/io_thread.hpp"
#include "tls_test_support.hpp"

namespace rivet::engine::testing {
namespace {

// What the echo sessions of one test saw, for the test thread.
struct Seen {
    std::mutex mu;
    std::string first_input;  // the bytes handed over at the start
    int started = 0;
    std::string get_first() {
        std::lock_guard lock(mu);
        return first_input;
    }
    int get_started() {
        std::lock_guard lock(mu);
        return started;
    }
};

// A protocol of the test's own: sends back every byte it reads, prefixed with "echo:" once.
class EchoSession final : public Session {
public:
    EchoSession(Connection& c, Seen& seen) : c_(c), seen_(seen) {}
    void start(std::string_view input) override {
        {
            std::lock_guard lock(seen_.mu);
            seen_.first_input.assign(input);
            ++seen_.started;
        }
        c_.set_interest(net::kReadable);
        echo("echo:");
        echo(input);
        on_readable();
    }
    void on_readable() override {
        const ssize_t n = c_.transport().read(c_.owner().read_buffer(), IoThread::kReadBufferSize);
        if (n == 0 || (n < 0 && errno != EAGAIN && errno != EINTR)) return c_.close_now();
        if (n > 0) echo({c_.owner().read_buffer(), size_t(n)});
    }
    void on_writable() override {}
    void on_timeout() override { c_.close_now(); }
    void on_closed() override {}
    void close_when_idle() override { c_.close_now(); }
    void complete(uint64_t, Reply&&) override {}

private:
    void echo(std::string_view bytes) {
        if (!bytes.empty()) (void)c_.transport().write(bytes);  // small: the socket takes it
    }
    Connection& c_;
    Seen& seen_;
};

// Answers /up with a 101 that hands the connection to an EchoSession; others as the harness.
TestApp::Handler upgrading(Seen& seen) {
    return [&seen](Exchange& e) {
        if (e.head().target != "/up") return e.respond_simple(200, "plain");
        ReplyView r;
        r.head.status = 101;
        r.then = [&seen](Connection& c) { return std::make_unique<EchoSession>(c, seen); };
        e.respond(r);
    };
}

TEST(EngineSession, HandOffStartsWithExactlyTheBytesAfterTheRequest) {
    Seen seen;
    EngineHarness h({}, upgrading(seen));
    auto c = h.connect();
    c->send(get("/up") + "first bytes\r\n\r\nGET / HTTP/1.1\r\n\r\n");
    ASSERT_TRUE(c->read_until("echo:first bytes\r\n\r\nGET / HTTP/1.1\r\n\r\n", 10s));
    EXPECT_EQ(c->received().rfind("HTTP/1.1 101 ", 0), 0u) << c->received();
    EXPECT_EQ(seen.get_first(), "first bytes\r\n\r\nGET / HTTP/1.1\r\n\r\n");
    c->clear();
    c->send("later");
    ASSERT_TRUE(c->read_until("later", 10s)) << "the new session reads the socket itself";
    c->shutdown_write();
    EXPECT_TRUE(c->wait_eof());
}

TEST(EngineSession, HandOffWaitsForEarlierAnswersAndReadsNothingAfterAsHttp) {
    Seen seen;
    TestApp::Handler up = upgrading(seen);
    EngineHarness h({}, [&](Exchange& e) {
        if (e.head().target == "/slow") return h.app().keep(e.defer());
        up(e);
    });
    auto c = h.connect();
    // Pipelined: an answer that comes later, then the hand-off, then the new protocol's bytes
    // (which are no HTTP request: read as one, they would get a 400).
    c->send(get("/slow") + get("/up") + "\x01\x02 not http");
    auto kept = h.app().take_deferred(1, 10s);
    ASSERT_EQ(kept.size(), 1u);
    EXPECT_EQ(c->read_for(100ms), "") << "nothing overtakes the first answer";
    kept[0].complete(rivet::app::reply_of(reply("slow done")));
    ASSERT_TRUE(c->read_until("echo:\x01\x02 not http", 10s));
    auto r = parse_responses(c->received());
    ASSERT_GE(r.size(), 2u);
    EXPECT_EQ(r[0].body, "slow done");
    EXPECT_EQ(r[1].status, 101);
    EXPECT_EQ(h.app().protocol_errors().size(), 0u);
}

TEST(EngineSession, NoHandOffWhenTheAnswerEndsTheConnection) {
    Seen seen;
    EngineHarness h({}, upgrading(seen));
    auto c = h.connect();
    c->send(get("/up", "Connection: close\r\n") + "bytes");
    EXPECT_TRUE(c->wait_eof(10s));
    EXPECT_EQ(c->received().find("echo:"), std::string::npos);
    EXPECT_EQ(seen.get_started(), 0);
}

class EngineSessionTls : public EngineTls {};

TEST_F(EngineSessionTls, HandOffOverTlsKeepsTheTransport) {
    Seen seen;
    EngineHarness h(config(), upgrading(seen));
    auto raw = h.connect(0, nullptr, true);
    MemClient c(*raw);
    ASSERT_TRUE(c.handshake());
    raw->send(c.cipher_of(get("/up") + "after"));
    std::string plain;
    for (int i = 0; i < 500 && plain.find("echo:after") == std::string::npos; ++i)
        plain += c.plain_for(20ms);
    EXPECT_EQ(plain.rfind("HTTP/1.1 101 ", 0), 0u) << plain;
    EXPECT_NE(plain.find("echo:after"), std::string::npos) << plain;
    raw->send(c.cipher_of("encrypted too"));
    plain.clear();
    for (int i = 0; i < 500 && plain.find("encrypted too") == std::string::npos; ++i)
        plain += c.plain_for(20ms);
    EXPECT_EQ(plain, "encrypted too");
}

ServerConfig proxied_tls(ServerConfig c) {
    c.proxy_protocol = true;
    EXPECT_EQ(c.proxy_trusted.assign({"127.0.0.0/8"}), "");
    return c;
}

void answer_peer(Exchange& e) {
    e.respond_simple(200, "peer=" + e.peer_address() + " secure=" + (e.tls().secure ? "1" : "0"));
}

std::string https_get(Client& raw, MemClient& c, const std::string& target) {
    raw.send(c.cipher_of(get(target)));
    std::string plain;
    for (int i = 0; i < 500 && plain.find("secure=") == std::string::npos; ++i)
        plain += c.plain_for(20ms);
    return plain;
}

// The header and the ClientHello in one write: the bytes after the header are the handshake's.
TEST_F(EngineSessionTls, ProxyHeaderBeforeTheClientHelloInOneWrite) {
    EngineHarness h(proxied_tls(config()), answer_peer);
    sockaddr_storage peer = v4_peer("127.0.0.1");
    auto raw = h.connect(0, &peer, true);
    MemClient c(*raw);
    SSL_do_handshake(c.ssl);
    raw->send("PROXY TCP4 192.0.2.7 10.0.0.1 4000 443\r\n" + c.take());
    ASSERT_TRUE(c.handshake());
    EXPECT_NE(https_get(*raw, c, "/a").find("peer=192.0.2.7 secure=1"), std::string::npos);
}

TEST_F(EngineSessionTls, ProxyV2HeaderInPiecesThenTheHandshake) {
    EngineHarness h(proxied_tls(config()), answer_peer);
    sockaddr_storage peer = v4_peer("127.0.0.1");
    auto raw = h.connect(0, &peer, true);
    std::string header("\r\n\r\n\0\r\nQUIT\n\x21\x11\x00\x0c", 16);  // PROXY, TCP4, 12 bytes
    header += std::string("\xc6\x33\x64\x09\x0a\x00\x00\x01\x0f\xa0\x01\xbb", 12);
    raw->send_in_pieces(header, 5);
    MemClient c(*raw);
    ASSERT_TRUE(c.handshake());
    EXPECT_NE(https_get(*raw, c, "/b").find("peer=198.51.100.9 secure=1"), std::string::npos);
}

TEST_F(EngineSessionTls, TlsWithoutAHeaderFromATrustedPeerStillWorks) {
    EngineHarness h(proxied_tls(config()), answer_peer);
    sockaddr_storage peer = v4_peer("127.0.0.1");
    auto raw = h.connect(0, &peer, true);
    MemClient c(*raw);
    ASSERT_TRUE(c.handshake());
    EXPECT_NE(https_get(*raw, c, "/c").find("peer=127.0.0.1 secure=1"), std::string::npos);
}

TEST_F(EngineSessionTls, InvalidProxyHeaderClosesBeforeAnyHandshake) {
    EngineHarness h(proxied_tls(config()), answer_peer);
    sockaddr_storage peer = v4_peer("127.0.0.1");
    auto raw = h.connect(0, &peer, true);
    raw->send("PROXY TCP4 not-an-address\r\n");
    EXPECT_TRUE(raw->wait_eof());
    EXPECT_EQ(raw->received(), "");
    ASSERT_TRUE(h.sync());
    EXPECT_EQ(h.io().stats().read().proxy_refused, 1u);
    EXPECT_EQ(h.io().stats().read().tls_handshakes.full_tls13, 0u);
}

}  // namespace
}  // namespace rivet::engine::testing
