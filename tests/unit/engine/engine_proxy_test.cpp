// The PROXY protocol on a connection (Phase::ProxyHeader): a trusted peer's header replaces the
// connection's address before the first request; the header is optional; an invalid one closes
// the connection; an untrusted peer's is never read.
#include <arpa/inet.h>
#include <gtest/gtest.h>
#include <netinet/in.h>

#include <chrono>
#include <string>

#include "engine_harness.hpp"

namespace rivet::engine::testing {
namespace {

const std::string kV2Sig("\r\n\r\n\0\r\nQUIT\n", 12);

ServerConfig proxy_config(const std::vector<std::string>& trusted = {"127.0.0.0/8"}) {
    ServerConfig config;
    config.proxy_protocol = true;
    EXPECT_EQ(config.proxy_trusted.assign(trusted), "");
    return config;
}

// Answers with the address the connection reports for its client.
void answer_peer(Exchange& ex) {
    ex.respond_simple(200, "peer=" + ex.peer_address() + "\n");
}

std::string v2_inet6(const char* src) {
    std::string block(36, '\0');
    inet_pton(AF_INET6, src, block.data());
    inet_pton(AF_INET6, "::1", block.data() + 16);
    std::string h = kV2Sig + "\x21\x21" + std::string("\x00\x24", 2);  // PROXY, TCP6, 36 bytes
    return h + block;
}

TEST(EngineProxy, V1HeaderAndRequestInOneWrite) {
    EngineHarness h(proxy_config(), answer_peer);
    sockaddr_storage peer = v4_peer("127.0.0.1");
    auto c = h.connect(0, &peer);
    c->send("PROXY TCP4 192.0.2.5 10.0.0.1 4000 80\r\n" + get("/a") + get("/b"));
    auto r = c->read_responses(2);
    ASSERT_EQ(r.size(), 2u);
    EXPECT_EQ(r[0].body, "peer=192.0.2.5\n");
    EXPECT_EQ(r[1].body, "peer=192.0.2.5\n");  // the whole connection is that client's
}

TEST(EngineProxy, V2HeaderOneByteAtATime) {
    EngineHarness h(proxy_config(), answer_peer);
    sockaddr_storage peer = v4_peer("127.0.0.1");
    auto c = h.connect(0, &peer);
    c->send_in_pieces(v2_inet6("2001:db8::42") + get("/a"), 1, 1ms);
    auto r = c->read_responses(1);
    ASSERT_EQ(r.size(), 1u);
    EXPECT_EQ(r[0].body, "peer=2001:db8::42\n");
}

TEST(EngineProxy, LocalAndUnknownKeepTheConnectionsAddress) {
    EngineHarness h(proxy_config(), answer_peer);
    sockaddr_storage peer = v4_peer("127.0.0.9");
    auto a = h.connect(0, &peer);
    a->send(kV2Sig + std::string("\x20\x00\x00\x00", 4) + get("/local"));
    auto b = h.connect(0, &peer);
    b->send("PROXY UNKNOWN\r\n" + get("/unknown"));
    for (auto* c : {a.get(), b.get()}) {
        auto r = c->read_responses(1);
        ASSERT_EQ(r.size(), 1u);
        EXPECT_EQ(r[0].body, "peer=127.0.0.9\n");
    }
}

TEST(EngineProxy, WithoutAHeaderATrustedPeerIsPlainHttp) {
    EngineHarness h(proxy_config(), answer_peer);
    sockaddr_storage peer = v4_peer("127.0.0.1");
    auto c = h.connect(0, &peer);
    c->send_in_pieces(get("/health"), 2);  // "GE": the signature is ruled out at the 'G'
    auto r = c->read_responses(1);
    ASSERT_EQ(r.size(), 1u);
    EXPECT_EQ(r[0].body, "peer=127.0.0.1\n");
}

TEST(EngineProxy, AnInvalidHeaderClosesWithoutAnAnswer) {
    EngineHarness h(proxy_config(), answer_peer);
    sockaddr_storage peer = v4_peer("127.0.0.1");
    for (std::string bad : {std::string("PROXY TCP4 1.2.3.4 5.6.7.8 99999 80\r\n"),
                            std::string("PROXY TCP4 nowhere\r\n"), kV2Sig + "\x25\x11"}) {
        auto c = h.connect(0, &peer);
        c->send(bad + get("/never"));
        ASSERT_TRUE(c->wait_eof());
        EXPECT_EQ(c->received(), "");
    }
    ASSERT_TRUE(h.sync());
    EXPECT_EQ(h.io().stats().read().proxy_refused, 3u);
    EXPECT_TRUE(h.app().bodies().empty());
}

TEST(EngineProxy, AHeaderFromAnUntrustedPeerIsABadRequest) {
    EngineHarness h(proxy_config({"10.0.0.0/8"}), answer_peer);
    sockaddr_storage peer = v4_peer("127.0.0.1");
    auto c = h.connect(0, &peer);
    c->send("PROXY TCP4 192.0.2.5 10.0.0.1 4000 80\r\n" + get("/a"));
    auto r = c->read_responses(1);
    ASSERT_EQ(r.size(), 1u);
    EXPECT_GE(r[0].status, 400);
    EXPECT_TRUE(h.app().bodies().empty());
    // Trusted, but a second header later on the connection is not one: it is HTTP.
    EngineHarness t(proxy_config(), answer_peer);
    auto d = t.connect(0, &peer);
    d->send("PROXY TCP4 192.0.2.5 10.0.0.1 4000 80\r\n" + get("/a") +
            "PROXY TCP4 192.0.2.6 10.0.0.1 4000 80\r\n" + get("/b"));
    r = d->read_responses(2);
    ASSERT_EQ(r.size(), 2u);
    EXPECT_EQ(r[0].body, "peer=192.0.2.5\n");
    EXPECT_GE(r[1].status, 400);
}

TEST(EngineProxy, OffByDefault) {
    EngineHarness h(ServerConfig{}, answer_peer);
    sockaddr_storage peer = v4_peer("127.0.0.1");
    auto c = h.connect(0, &peer);
    c->send("PROXY TCP4 192.0.2.5 10.0.0.1 4000 80\r\n" + get("/a"));
    auto r = c->read_responses(1);
    ASSERT_EQ(r.size(), 1u);
    EXPECT_GE(r[0].status, 400);
}

TEST(EngineProxy, ASlowHeaderMeetsTheHeaderTimeout) {
    ServerConfig config = proxy_config();
    config.timeouts.header_ms = 200;
    EngineHarness h(config, answer_peer);
    sockaddr_storage peer = v4_peer("127.0.0.1");
    auto c = h.connect(0, &peer);
    auto start = std::chrono::steady_clock::now();
    c->send("PROXY TCP4 192.0.2.5 ");
    ASSERT_TRUE(c->wait_eof(1500ms));
    EXPECT_GE(std::chrono::steady_clock::now() - start, 150ms);
    EXPECT_EQ(c->received(), "");
}

}  // namespace
}  // namespace rivet::engine::testing
