// Session resumption through real handshakes: tickets (TLS 1.2 and 1.3), the session cache (TLS
// 1.2 session ids, TLS 1.3 stateful), certificates chosen by SNI, reloads, key rotation.
#include <gtest/gtest.h>

#include <memory>

#include "handshake.hpp"
#include "test_certificates.hpp"
#include "tls/ticket_keys.hpp"

using namespace rivet::tls;
using namespace rivet::tls::testing;

namespace {

std::shared_ptr<const Context> two_hosts(uint64_t ticket_lifetime_s, size_t cache_size,
                                         std::shared_ptr<TicketKeys> keys = nullptr) {
    const auto& t = test_certificates();
    Settings s;
    s.certificates = {t.localhost, t.other};
    s.ticket_key_lifetime_s = ticket_lifetime_s;
    s.session_cache_size = cache_size;
    return Context::load(s, std::move(keys));
}

// A first handshake, then a second that offers its session: whether the server resumed it.
struct Pair {
    Handshake first, second;
};
Pair twice(const Context& a, const Context& b, Client c) {
    Pair p;
    p.first = handshake(a, c);
    EXPECT_TRUE(p.first.ok) << p.first.client_error << " / " << p.first.server_error;
    EXPECT_FALSE(p.first.reused);
    c.resume = p.first.session.get();
    p.second = handshake(b, c);
    EXPECT_TRUE(p.second.ok) << p.second.client_error << " / " << p.second.server_error;
    return p;
}

}  // namespace

TEST(TlsResumption, TicketsTls13) {
    auto context = two_hosts(3600, 0);
    for (const char* sni : {"", "localhost", "other.test"}) {
        Pair p = twice(*context, *context, {.sni = sni});
        EXPECT_TRUE(p.first.has_ticket) << sni;
        EXPECT_TRUE(p.second.reused) << sni;
        EXPECT_EQ(p.second.version, "TLSv1.3");
        EXPECT_EQ(p.second.peer_cn, p.first.peer_cn);
    }
}

TEST(TlsResumption, OneTls13TicketPerHandshakeFullOrResumed) {
    // OpenSSL sends two by default; rivet one (see Context::load).
    auto context = two_hosts(3600, 100);
    Pair p = twice(*context, *context, {});
    EXPECT_EQ(p.first.sessions_sent, 1);
    ASSERT_TRUE(p.second.reused);
    // A TLS 1.3 ticket is used once: a resumption, even with the current key, brings a new one
    // (without it, a client chaining sessions got a full handshake every other connection).
    EXPECT_EQ(p.second.sessions_sent, 1);
    // Nothing to resume with: no ticket at all.
    auto none = two_hosts(0, 0);
    EXPECT_EQ(handshake(*none).sessions_sent, 0);
}

TEST(TlsResumption, TicketsTls12) {
    auto context = two_hosts(3600, 0);
    for (const char* sni : {"", "other.test"}) {
        Pair p = twice(*context, *context, {.sni = sni, .max_version = TLS1_2_VERSION});
        EXPECT_TRUE(p.first.has_ticket) << sni;
        EXPECT_TRUE(p.second.reused) << sni;
        EXPECT_EQ(p.second.version, "TLSv1.2");
    }
}

TEST(TlsResumption, SessionIdsTls12WithoutTickets) {
    auto context = two_hosts(0, 100);
    for (const char* sni : {"", "other.test"}) {
        Pair p = twice(*context, *context, {.sni = sni, .max_version = TLS1_2_VERSION});
        EXPECT_FALSE(p.first.has_ticket) << sni;  // no tickets: the cache did it
        EXPECT_TRUE(p.second.reused) << sni;
    }
}

TEST(TlsResumption, StatefulTls13WithoutTickets) {
    auto context = two_hosts(0, 100);
    Pair p = twice(*context, *context, {.sni = "other.test"});
    EXPECT_TRUE(p.second.reused);
    EXPECT_EQ(p.second.peer_cn, "other.test");
}

TEST(TlsResumption, NothingToResumeWhenBothAreOff) {
    auto context = two_hosts(0, 0);
    for (int version : {TLS1_2_VERSION, TLS1_3_VERSION}) {
        Pair p = twice(*context, *context, {.max_version = version});
        EXPECT_FALSE(p.second.reused) << version;
    }
}

TEST(TlsResumption, CacheSizeBoundsTheSessionIds) {
    // One entry: the second client's session pushes the first one's out.
    auto context = two_hosts(0, 1);
    Client c{.max_version = TLS1_2_VERSION};
    Handshake a = handshake(*context, c);
    Handshake b = handshake(*context, c);
    ASSERT_TRUE(a.ok && b.ok);
    // (b first: a's full handshake would cache a new session in its turn, pushing b's out.)
    c.resume = b.session.get();
    EXPECT_TRUE(handshake(*context, c).reused);
    c.resume = a.session.get();
    EXPECT_FALSE(handshake(*context, c).reused);
}

TEST(TlsResumption, TicketsSurviveAReloadThatSharesTheKeys) {
    auto old_context = two_hosts(3600, 100);
    auto reloaded = two_hosts(3600, 100, old_context->ticket_keys());
    EXPECT_EQ(reloaded->ticket_keys(), old_context->ticket_keys());
    auto fresh = two_hosts(3600, 100);
    for (int version : {TLS1_2_VERSION, TLS1_3_VERSION}) {
        Pair p = twice(*old_context, *reloaded, {.sni = "other.test", .max_version = version});
        EXPECT_TRUE(p.second.reused) << version;
        p = twice(*old_context, *fresh, {.sni = "other.test", .max_version = version});
        EXPECT_FALSE(p.second.reused) << version;  // other keys, other cache: a full handshake
    }
}

TEST(TlsResumption, RotatedKeysStillOpenTicketsForOneMoreLifetime) {
    auto now = std::make_shared<uint64_t>(1000);
    auto keys = std::make_shared<TicketKeys>(60, [now] { return *now; });
    auto context = two_hosts(60, 0, keys);
    for (int version : {TLS1_2_VERSION, TLS1_3_VERSION}) {
        Handshake first = handshake(*context, {.max_version = version});
        ASSERT_TRUE(first.ok);
        *now += 61;  // the key that sealed it is now the previous one
        Handshake second =
            handshake(*context, {.max_version = version, .resume = first.session.get()});
        EXPECT_TRUE(second.reused) << version;
        if (version == TLS1_3_VERSION) {
            EXPECT_EQ(second.sessions_sent, 1);  // the renewed ticket
        }
        // The server renewed the ticket with the current key: it opens after one more lifetime.
        *now += 60;
        Handshake third =
            handshake(*context, {.max_version = version, .resume = second.session.get()});
        EXPECT_TRUE(third.reused) << version;
        // `first`'s key is gone now.
        Handshake stale =
            handshake(*context, {.max_version = version, .resume = first.session.get()});
        ASSERT_TRUE(stale.ok);
        EXPECT_FALSE(stale.reused) << version;
    }
}
