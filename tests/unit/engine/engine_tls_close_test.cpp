// How TLS connections end: a close_notify that comes with the last request, half a record
// waiting when the server drains, and handshakes that end without a reason of their own.
#include <thread>

#include "tls_test_support.hpp"

namespace rivet::engine::testing {
namespace {

using EngineTlsClose = EngineTls;

uint64_t failures(EngineHarness& h, TlsFailure f) {
    return h.io().stats().read().tls_failures[size_t(f)];
}

// The request and the client's close_notify in one write, no FIN (a TLS half-close): the alert
// is read with the request and not announced again, yet it must end the connection.
TEST_F(EngineTlsClose, CloseNotifyReadWithTheRequestEndsTheConnection) {
    EngineHarness h(config());
    auto raw = h.connect(0, nullptr, true);
    MemClient c(*raw);
    ASSERT_TRUE(c.handshake());
    std::string bytes = c.cipher_of(get("/a"));
    SSL_shutdown(c.ssl);
    bytes += c.take();
    raw->send(bytes);
    EXPECT_NE(c.plain_for(300ms).find("GET /a"), std::string::npos);
    EXPECT_TRUE(raw->wait_eof(1500ms)) << "still open after the client's close_notify";
}

// Half a record of the next request waits inside the session when the drain starts: the
// connection is not idle, and the request is answered once the rest arrives.
TEST_F(EngineTlsClose, DrainWaitsForARequestHalfReadInsideTheSession) {
    EngineHarness h(config());
    auto raw = h.connect(0, nullptr, true);
    MemClient c(*raw);
    ASSERT_TRUE(c.handshake());
    raw->send(c.cipher_of(get("/a")));
    ASSERT_NE(c.plain_for(300ms).find("GET /a"), std::string::npos);
    const std::string record = c.cipher_of(get("/b"));
    raw->send(record.substr(0, record.size() / 2));
    std::this_thread::sleep_for(100ms);
    ASSERT_TRUE(h.sync());
    h.io().begin_drain();
    ASSERT_TRUE(h.sync());
    raw->send(record.substr(record.size() / 2));
    std::string plain;
    for (int i = 0; i < 10 && plain.find("GET /b") == std::string::npos; ++i)
        plain += c.plain_for(50ms);
    EXPECT_NE(plain.find("GET /b"), std::string::npos) << "lost; eof=" << raw->eof();
}

// A client that goes away mid-handshake without a read seeing it (the loop sees a hang-up).
TEST_F(EngineTlsClose, AHangUpMidHandshakeIsCountedAsThePeersClose) {
    EngineHarness h(config());
    {
        auto c = h.connect(0, nullptr, true);
        c->send(std::string("\x16\x03\x01\x02\x00\x01", 6));
        ASSERT_TRUE(h.sync());
    }  // both directions closed
    for (int i = 0; i < 50 && failures(h, TlsFailure::PeerClosed) == 0; ++i) {
        std::this_thread::sleep_for(20ms);
        ASSERT_TRUE(h.sync());
    }
    auto s = h.io().stats().read();
    uint64_t all = 0;
    for (auto f : s.tls_failures) all += f;
    EXPECT_EQ(s.tls_failures[size_t(TlsFailure::PeerClosed)], 1u);
    EXPECT_EQ(all, 1u);  // and under no other reason
}

// A TLS 1.2 client that answers the server's flight with close_notify.
TEST_F(EngineTlsClose, CloseNotifyDuringTheHandshakeIsThePeersClose) {
    EngineHarness h(config());
    auto raw = h.connect(0, nullptr, true);
    MemClient c(*raw);
    SSL_set_max_proto_version(c.ssl, TLS1_2_VERSION);
    SSL_do_handshake(c.ssl);
    raw->send(c.take());
    c.feed(100ms);
    raw->send(std::string("\x15\x03\x03\x00\x02\x01\x00", 7));  // close_notify, in the clear
    EXPECT_TRUE(raw->wait_eof(1500ms));
    ASSERT_TRUE(h.sync());
    EXPECT_EQ(failures(h, TlsFailure::PeerClosed), 1u);
    EXPECT_EQ(failures(h, TlsFailure::Malformed), 0u);
}

}  // namespace
}  // namespace rivet::engine::testing
