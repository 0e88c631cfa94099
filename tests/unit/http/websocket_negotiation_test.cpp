// permessage-deflate's negotiation (RFC 7692 §5, §7): offers with and without parameters, the
// server's own preferences, offers declined and the next one taken, headers that cannot be parsed.
#include <gtest/gtest.h>

#include <string>

#include "http/websocket/deflate.hpp"

namespace rivet::http::ws {
namespace {

struct Negotiated {
    bool accepted;
    bool malformed;
    DeflateParams params;
    std::string response;
};

Negotiated negotiate(std::string_view offers, DeflateConfig config = {}) {
    Negotiated n{};
    n.accepted = negotiate_deflate(offers, config, n.params, n.response, n.malformed);
    return n;
}

TEST(WebSocketDeflate, NegotiationAcceptsPlainAndParameterisedOffers) {
    Negotiated n = negotiate("permessage-deflate");
    ASSERT_TRUE(n.accepted);
    EXPECT_EQ(n.response, "permessage-deflate");
    EXPECT_FALSE(n.params.server_no_context_takeover);
    EXPECT_EQ(n.params.server_max_window_bits, 15);
    EXPECT_EQ(n.params.client_max_window_bits, 15);

    n = negotiate("permessage-deflate; client_max_window_bits");  // what browsers send
    ASSERT_TRUE(n.accepted);
    EXPECT_EQ(n.response, "permessage-deflate");
    EXPECT_EQ(n.params.client_max_window_bits, 15);

    n = negotiate(
        "Permessage-Deflate ; server_no_context_takeover; client_no_context_takeover;"
        "server_max_window_bits=10; client_max_window_bits=\"12\"");
    ASSERT_TRUE(n.accepted);
    EXPECT_EQ(n.response,
              "permessage-deflate; server_no_context_takeover; client_no_context_takeover; "
              "server_max_window_bits=10; client_max_window_bits=12");
    EXPECT_TRUE(n.params.server_no_context_takeover);
    EXPECT_TRUE(n.params.client_no_context_takeover);
    EXPECT_EQ(n.params.server_max_window_bits, 10);
    EXPECT_EQ(n.params.client_max_window_bits, 12);

    // The server's own preferences: no context takeover, a smaller window.
    n = negotiate("permessage-deflate; server_max_window_bits=14",
                  DeflateConfig{.server_no_context_takeover = true, .server_max_window_bits = 11});
    ASSERT_TRUE(n.accepted);
    EXPECT_EQ(n.response,
              "permessage-deflate; server_no_context_takeover; server_max_window_bits=11");
    n = negotiate("permessage-deflate", DeflateConfig{.server_max_window_bits = 11});
    EXPECT_EQ(n.params.server_max_window_bits, 11);
    EXPECT_EQ(n.response, "permessage-deflate");

    // Disabled: nothing is accepted, nothing is malformed.
    n = negotiate("permessage-deflate;;", DeflateConfig{.enabled = false});
    EXPECT_FALSE(n.accepted);
    EXPECT_FALSE(n.malformed);
}

TEST(WebSocketDeflate, NegotiationDeclinesOffersItCannotAcceptAndTakesTheNext) {
    for (std::string_view bad : {
             "permessage-deflate; server_max_window_bits=8",  // zlib cannot
             "permessage-deflate; unknown_param",
             "permessage-deflate; server_no_context_takeover; server_no_context_takeover",
             "permessage-deflate; server_max_window_bits",  // needs a value
             "permessage-deflate; server_max_window_bits=16",
             "permessage-deflate; client_max_window_bits=7",
             "permessage-deflate; client_max_window_bits=010",
             "permessage-deflate; client_max_window_bits=\"\"",
             "permessage-deflate; server_no_context_takeover=1",
         }) {
        Negotiated n = negotiate(bad);
        EXPECT_FALSE(n.accepted) << bad;
        EXPECT_FALSE(n.malformed) << bad;
        n = negotiate(std::string(bad) +
                      ", x-webkit-deflate-frame, permessage-deflate; "
                      "client_max_window_bits=9");
        ASSERT_TRUE(n.accepted) << bad;
        EXPECT_EQ(n.response, "permessage-deflate; client_max_window_bits=9") << bad;
    }
    Negotiated n = negotiate("x-webkit-deflate-frame, foo; bar=\"a,b\"");
    EXPECT_FALSE(n.accepted);
    EXPECT_FALSE(n.malformed);
    n = negotiate("");
    EXPECT_FALSE(n.accepted);
    EXPECT_FALSE(n.malformed);
}

TEST(WebSocketDeflate, NegotiationOfAHeaderThatCannotBeParsed) {
    for (std::string_view bad : {
             "permessage-deflate;",
             "permessage-deflate; =15",
             "permessage-deflate; server_max_window_bits=",
             "permessage-deflate; client_max_window_bits=\"15",
             "permessage-deflate server_no_context_takeover",
             "; permessage-deflate",
             "permessage-deflate, @",
         }) {
        const Negotiated n = negotiate(bad);
        EXPECT_FALSE(n.accepted) << bad;
        EXPECT_TRUE(n.malformed) << bad;
    }
    // Empty list elements are not malformed (RFC 9110 §5.6.1).
    EXPECT_TRUE(negotiate(" , permessage-deflate ,, ").accepted);
}

}  // namespace
}  // namespace rivet::http::ws
