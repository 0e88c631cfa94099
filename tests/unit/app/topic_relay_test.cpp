// The topic relay's payload: the publishing instance's id, the message's kind, the message as
// it is (binary-safe), and the reading that drops what is not rivet's.
#include <gtest/gtest.h>

#include <string>

#include "app/websocket/topic_relay.hpp"

using rivet::MessageKind;
using rivet::app::TopicRelay;

TEST(TopicRelay, EnvelopeKeepsOriginKindAndEveryByte) {
    const std::string origin = "0123456789abcdef";
    const std::string binary("\0\xff\r\n\0", 5);
    for (auto kind : {MessageKind::Text, MessageKind::Binary}) {
        std::string payload = TopicRelay::envelope(origin, binary, kind);
        TopicRelay::Opened opened;
        ASSERT_TRUE(TopicRelay::open_envelope(payload, opened));
        EXPECT_EQ(opened.origin, origin);
        EXPECT_EQ(opened.kind, kind);
        EXPECT_EQ(opened.message, binary);
    }
    TopicRelay::Opened empty;
    ASSERT_TRUE(
        TopicRelay::open_envelope(TopicRelay::envelope(origin, "", MessageKind::Text), empty));
    EXPECT_EQ(empty.message, "");
}

TEST(TopicRelay, ForeignPayloadsAreRefused) {
    TopicRelay::Opened opened;
    EXPECT_FALSE(TopicRelay::open_envelope("", opened));
    EXPECT_FALSE(TopicRelay::open_envelope("hello", opened));                   // too short
    EXPECT_FALSE(TopicRelay::open_envelope("0123456789abcdefxhello", opened));  // no kind
}
