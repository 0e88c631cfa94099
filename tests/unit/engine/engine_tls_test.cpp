// TLS in the engine: a connection accepted on a TLS listener runs its handshake before any HTTP,
// then every byte passes through its tls::Session. The client is OpenSSL's, over the harness's
// socketpair; the certificate is made at test time with the openssl command line.
#include <gtest/gtest.h>
#include <openssl/err.h>
#include <openssl/ssl.h>
#include <sys/socket.h>
#include <unistd.h>

#include <cstdlib>
#include <filesystem>
#include <string>
#include <thread>

#include "tls_test_support.hpp"

namespace rivet::engine::testing {
namespace {

// A blocking OpenSSL client on the client end of a harness connection. Reads time out (the
// socket's SO_RCVTIMEO), so a broken engine fails the test instead of hanging it.
class TlsClient {
public:
    explicit TlsClient(int fd, int max_version = 0) {
        timeval tv{3, 0};
        setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof tv);
        ctx_ = SSL_CTX_new(TLS_client_method());
        if (max_version) SSL_CTX_set_max_proto_version(ctx_, max_version);
        ssl_ = SSL_new(ctx_);
        SSL_set_fd(ssl_, fd);
        SSL_set_tlsext_host_name(ssl_, "localhost");
    }
    ~TlsClient() {
        SSL_free(ssl_);
        SSL_CTX_free(ctx_);
    }
    bool handshake() { return SSL_connect(ssl_) == 1; }
    void send(std::string_view bytes) {
        ASSERT_EQ(SSL_write(ssl_, bytes.data(), int(bytes.size())), int(bytes.size()));
    }
    // Reads until `n` responses arrived, the peer closed, or a read timed out.
    std::vector<ParsedResponse> read_responses(size_t n) {
        for (;;) {
            auto parsed = parse_responses(received_, {}, closed_);
            if (parsed.size() >= n || closed_) return parsed;
            char buf[16384];
            int got = SSL_read(ssl_, buf, sizeof buf);
            if (got <= 0) {
                clean_close_ = SSL_get_error(ssl_, got) == SSL_ERROR_ZERO_RETURN;
                closed_ = true;
                ERR_clear_error();
                continue;
            }
            received_.append(buf, size_t(got));
        }
    }
    bool clean_close() const { return clean_close_; }  // the server's close_notify came
    SSL* ssl() { return ssl_; }

private:
    SSL_CTX* ctx_;
    SSL* ssl_;
    std::string received_;
    bool closed_ = false;
    bool clean_close_ = false;
};

TEST_F(EngineTls, HandshakeThenKeepAliveRequestsWithTheSessionsFacts) {
    TlsFacts seen;
    std::string sni;
    EngineHarness h(config(), [&](Exchange& e) {
        seen = e.tls();
        sni = std::string(seen.server_name);  // the views live as long as the connection
        e.respond_simple(200, "over tls\n");
    });
    auto raw = h.connect(0, nullptr, true);
    TlsClient c(raw->fd());
    ASSERT_TRUE(c.handshake());
    c.send(get("/a"));
    auto r = c.read_responses(1);
    ASSERT_EQ(r.size(), 1u);
    EXPECT_EQ(r[0].status, 200);
    EXPECT_EQ(r[0].body, "over tls\n");
    c.send(get("/b"));
    EXPECT_EQ(c.read_responses(2).size(), 2u);
    EXPECT_TRUE(seen.secure);
    EXPECT_FALSE(seen.resumed);
    EXPECT_EQ(seen.version, "TLSv1.3");
    EXPECT_FALSE(seen.cipher.empty());
    EXPECT_EQ(sni, "localhost");
    ASSERT_TRUE(h.sync());
    EXPECT_EQ(h.io().stats().read().tls_handshakes.full_tls13, 1u);
}

TEST_F(EngineTls, PlainConnectionsSayTheyAreNotSecure) {
    TlsFacts seen{true};
    EngineHarness h(config(), [&](Exchange& e) {
        seen = e.tls();
        e.respond_simple(200, "plain\n");
    });
    auto c = h.connect();
    c->send(get("/"));
    ASSERT_EQ(c->read_responses(1).size(), 1u);
    EXPECT_FALSE(seen.secure);
}

TEST_F(EngineTls, PipelinedRequestsAreAnsweredInOrder) {
    EngineHarness h(config());
    auto raw = h.connect(0, nullptr, true);
    TlsClient c(raw->fd());
    ASSERT_TRUE(c.handshake());
    std::string all;
    for (int i = 0; i < 20; ++i) all += get(std::string("/").append(std::to_string(i)));
    c.send(all);
    auto r = c.read_responses(20);
    ASSERT_EQ(r.size(), 20u);
    for (int i = 0; i < 20; ++i) {
        std::string want = "GET /";
        want += std::to_string(i);
        want += " body=";
        EXPECT_EQ(r[size_t(i)].body, want);
    }
}

TEST_F(EngineTls, LargeAnswersAndBodiesPassWhole) {
    // 3 MiB out: many batches of records, more than a socketpair buffer holds at once.
    std::string big(3 << 20, '\0');
    for (size_t i = 0; i < big.size(); ++i) big[i] = char('a' + i % 26);
    EngineHarness h(config(), [&](Exchange& e) {
        if (e.head().target == "/big") return e.respond_simple(200, big);
        e.respond_simple(200, std::to_string(e.body().size()));
    });
    auto raw = h.connect(0, nullptr, true);
    TlsClient c(raw->fd());
    ASSERT_TRUE(c.handshake());
    c.send(get("/big"));
    auto r = c.read_responses(1);
    ASSERT_EQ(r.size(), 1u);
    EXPECT_TRUE(r[0].body == big);
    // 1 MiB in: many records, in reads of at most the room less one record.
    std::string upload(1 << 20, 'x');
    c.send(request("POST", "/up", {}, upload));
    r = c.read_responses(2);
    ASSERT_EQ(r.size(), 2u);
    EXPECT_EQ(r[1].body, std::to_string(upload.size()));
}

TEST_F(EngineTls, ConnectionCloseEndsWithCloseNotify) {
    EngineHarness h(config());
    auto raw = h.connect(0, nullptr, true);
    TlsClient c(raw->fd());
    ASSERT_TRUE(c.handshake());
    c.send(get("/", "Connection: close\r\n"));
    auto r = c.read_responses(2);  // more than come: reads to the end
    ASSERT_EQ(r.size(), 1u);
    EXPECT_TRUE(c.clean_close());
}

TEST_F(EngineTls, PlainHttpToTheTlsPortIsAnswered400) {
    EngineHarness h(config());
    auto c = h.connect(0, nullptr, true);
    c->send(get("/"));
    auto r = c->read_responses(1);
    ASSERT_EQ(r.size(), 1u);
    EXPECT_EQ(r[0].status, 400);
    EXPECT_NE(r[0].body.find("HTTPS port"), std::string::npos) << r[0].body;
    EXPECT_TRUE(c->wait_eof());
    ASSERT_TRUE(h.sync());
    EXPECT_EQ(h.io().stats().read().tls_failures[size_t(TlsFailure::PlainHttp)], 1u);
}

TEST_F(EngineTls, BytesThatAreNotTlsAreClosedWithoutAWord) {
    EngineHarness h(config());
    auto c = h.connect(0, nullptr, true);
    c->send(std::string("\x01\x02\x03\x04 random", 11));
    EXPECT_TRUE(c->wait_eof());
    EXPECT_EQ(c->received(), "");
    // A handshake record that is not a ClientHello: OpenSSL refuses it, with an alert.
    auto d = h.connect(0, nullptr, true);
    d->send(std::string("\x16\x03\x01\x00\x05\x99\x00\x00\x01\x00", 10));
    EXPECT_TRUE(d->wait_eof());
    ASSERT_TRUE(h.sync());
    auto s = h.io().stats().read();
    EXPECT_EQ(s.tls_failures[size_t(TlsFailure::Malformed)], 2u);
}

TEST_F(EngineTls, ASilentOrStalledHandshakeEndsAtTheHandshakeTimeout) {
    ServerConfig cfg = config();
    cfg.timeouts.handshake_ms = 200;
    cfg.timeouts.header_ms = 60'000;  // not the one that fires
    EngineHarness h(cfg);
    auto silent = h.connect(0, nullptr, true);
    auto stalled = h.connect(0, nullptr, true);
    stalled->send(std::string("\x16\x03\x01\x02\x00\x01\x00\x01\xfc\x03\x03", 11));  // half a hello
    EXPECT_TRUE(silent->wait_eof(3000ms));
    EXPECT_TRUE(stalled->wait_eof(3000ms));
    ASSERT_TRUE(h.sync());
    EXPECT_EQ(h.io().stats().read().tls_failures[size_t(TlsFailure::Timeout)], 2u);
}

TEST_F(EngineTls, ClientThatClosesMidHandshakeIsCounted) {
    EngineHarness h(config());
    auto c = h.connect(0, nullptr, true);
    c->send(std::string("\x16\x03\x01\x02\x00\x01", 6));
    c->shutdown_write();
    EXPECT_TRUE(c->wait_eof());
    ASSERT_TRUE(h.sync());
    EXPECT_EQ(h.io().stats().read().tls_failures[size_t(TlsFailure::PeerClosed)], 1u);
}

TEST_F(EngineTls, OldProtocolVersionsAreRefused) {
    EngineHarness h(config());
    auto raw = h.connect(0, nullptr, true);
    TlsClient c(raw->fd(), TLS1_1_VERSION);
    SSL_set_security_level(c.ssl(), 0);  // the client would refuse 1.1 itself otherwise
    EXPECT_FALSE(c.handshake());
    ERR_clear_error();
    ASSERT_TRUE(h.sync());
    EXPECT_EQ(h.io().stats().read().tls_failures[size_t(TlsFailure::NoCommon)], 1u);
}

// Every byte of the handshake and the request in a write of its own: the engine reassembles
// records from as many reads.
TEST_F(EngineTls, RecordsSplitIntoOneByteWritesAreReassembled) {
    EngineHarness h(config());
    auto raw = h.connect(0, nullptr, true);
    MemClient c(*raw);
    ASSERT_TRUE(c.handshake(1));
    raw->send_in_pieces(c.cipher_of(get("/split")), 1, 0ms);
    std::string plain;
    for (int i = 0; i < 20 && plain.find("GET /split") == std::string::npos; ++i)
        plain += c.plain_for(50ms);
    EXPECT_NE(plain.find("GET /split body="), std::string::npos) << plain;
}

}  // namespace
}  // namespace rivet::engine::testing
