// The WebSocket message layer (uncompressed): whole messages as views of the caller's buffer,
// fragments with control frames between them, UTF-8 across fragments, every refusal with its
// close code, close handling, stopping, and a whole conversation fed at every split point.
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "http/websocket/reader.hpp"
#include "websocket_test_util.hpp"

namespace rivet::http::ws {
namespace {

using test::feed_bytewise;
using test::feed_pieces;
using test::Recorder;
using Status = Reader::Status;
using Log = std::vector<std::string>;

constexpr uint32_t kMask = 0xA1B2C3D4;

std::string frame(Opcode op, std::string_view payload, bool fin = true, bool rsv1 = false) {
    std::string out;
    append_masked_frame(out, op, payload, kMask, fin, rsv1);
    return out;
}

std::string close_payload(uint16_t code, std::string_view reason) {
    std::string p{char(code >> 8), char(code & 0xFF)};
    return p + std::string(reason);
}

void expect_refusal(const std::string& wire, uint16_t code, ReaderLimits limits = {}) {
    Reader reader(limits);
    Recorder events;
    const auto fed = feed_pieces(reader, events, wire);
    EXPECT_EQ(fed.status, Status::Refused);
    EXPECT_EQ(reader.violation().code, code) << reader.violation().reason;
    // It stays refused.
    std::string more = frame(Opcode::Text, "x");
    size_t used = 99;
    EXPECT_EQ(reader.feed(more.data(), more.size(), events, used), Status::Refused);
    EXPECT_EQ(used, 0u);
}

TEST(WebSocketReader, AWholeMessageIsAViewOfTheBuffer) {
    Reader reader({});
    Recorder events;
    std::string wire = frame(Opcode::Text, "Hello") + frame(Opcode::Binary, std::string("\0\1", 2));
    size_t used = 0;
    // Binary last: its payload is the last one seen.
    EXPECT_EQ(reader.feed(wire.data(), wire.size(), events, used), Status::More);
    EXPECT_EQ(used, wire.size());
    EXPECT_EQ(events.log, (Log{"text:Hello", std::string("binary:\0\1", 9)}));
    EXPECT_EQ(events.last_payload, wire.data() + wire.size() - 2) << "not copied";
    EXPECT_EQ(reader.buffered(), 0u);
}

TEST(WebSocketReader, EmptyMessagesAndControlFrames) {
    Reader reader({});
    Recorder events;
    const auto fed = feed_pieces(reader, events,
                                 frame(Opcode::Text, "") + frame(Opcode::Binary, "") +
                                     frame(Opcode::Ping, "") + frame(Opcode::Pong, "p"));
    EXPECT_EQ(fed.status, Status::More);
    EXPECT_EQ(events.log, (Log{"text:", "binary:", "ping:", "pong:p"}));
}

TEST(WebSocketReader, FragmentsWithControlFramesBetween) {
    const std::string wire =
        frame(Opcode::Text, "Hel", false) + frame(Opcode::Ping, "p1") +
        frame(Opcode::Continuation, "lo ", false) + frame(Opcode::Pong, "") +
        frame(Opcode::Continuation, "world") + frame(Opcode::Binary, "b", false) +
        frame(Opcode::Continuation, "", false) + frame(Opcode::Continuation, "c");
    Reader reader({});
    Recorder events;
    EXPECT_EQ(feed_pieces(reader, events, wire).status, Status::More);
    EXPECT_EQ(events.log, (Log{"ping:p1", "pong:", "text:Hello world", "binary:bc"}));
    EXPECT_EQ(reader.buffered(), 0u);
}

TEST(WebSocketReader, Utf8SplitAcrossFragments) {
    // "é" is C3 A9; "€" is E2 82 AC: cut inside both.
    Reader reader({});
    Recorder events;
    const std::string ok = frame(Opcode::Text, "caf\xC3", false) +
                           frame(Opcode::Continuation, "\xA9 \xE2", false) +
                           frame(Opcode::Ping, "") + frame(Opcode::Continuation, "\x82\xAC");
    EXPECT_EQ(feed_pieces(reader, events, ok).status, Status::More);
    EXPECT_EQ(events.log, (Log{"ping:", "text:caf\xC3\xA9 \xE2\x82\xAC"}));

    // Fail fast: the first fragment's bad byte is refused before the message ends.
    expect_refusal(frame(Opcode::Text, "ok \xED\xA0\x80", false), close_code::kInvalidPayload);
    // Each fragment fine alone, invalid together (a surrogate across the cut).
    expect_refusal(frame(Opcode::Text, "\xED", false) + frame(Opcode::Continuation, "\xA0\x80"),
                   close_code::kInvalidPayload);
    // A code point cut by the message's end.
    expect_refusal(frame(Opcode::Text, "a\xE2\x82", false) + frame(Opcode::Continuation, ""),
                   close_code::kInvalidPayload);
    expect_refusal(frame(Opcode::Text, "a\xE2\x82"), close_code::kInvalidPayload);
    // Binary is not checked.
    Reader binary({});
    Recorder events2;
    EXPECT_EQ(feed_pieces(binary, events2, frame(Opcode::Binary, "\xFF\xFE")).status, Status::More);
}

TEST(WebSocketReader, InvalidUtf8InPiecesFailsBeforeTheFrameEnds) {
    Reader reader({});
    Recorder events;
    std::string wire = frame(Opcode::Text, std::string(100, 'a') + "\xC0" + std::string(100, 'b'));
    // Cut after the bad byte (a head of 8: 16-bit length): refused, the frame unfinished.
    const auto fed = feed_pieces(reader, events, wire.substr(0, 8 + 101));
    EXPECT_EQ(fed.status, Status::Refused);
    EXPECT_EQ(reader.violation().code, close_code::kInvalidPayload);
}

TEST(WebSocketReader, FragmentationRefusals) {
    using namespace close_code;
    expect_refusal(frame(Opcode::Continuation, "x"), kProtocolError);
    expect_refusal(frame(Opcode::Text, "a", false) + frame(Opcode::Text, "b"), kProtocolError);
    expect_refusal(frame(Opcode::Binary, "a", false) + frame(Opcode::Text, "b"), kProtocolError);
    expect_refusal(frame(Opcode::Text, "a") + frame(Opcode::Continuation, "b"), kProtocolError);
    expect_refusal(frame(Opcode::Ping, "a", false), kProtocolError);
    expect_refusal(frame(Opcode::Ping, std::string(126, 'a')), kProtocolError);
    expect_refusal(frame(Opcode::Text, "a", true, true), kProtocolError);  // RSV1, no inflater
    std::string unmasked;
    append_frame(unmasked, Opcode::Text, "a");
    expect_refusal(unmasked, kProtocolError);
    std::string rsv2 = frame(Opcode::Text, "a");
    rsv2[0] = char(uint8_t(rsv2[0]) | 0x20);
    expect_refusal(rsv2, kProtocolError);
    std::string op3 = frame(Opcode::Text, "a");
    op3[0] = char(0x83);
    expect_refusal(op3, kProtocolError);
}

TEST(WebSocketReader, SizeLimits) {
    using namespace close_code;
    expect_refusal(frame(Opcode::Binary, std::string(101, 'a')), kMessageTooBig,
                   ReaderLimits{.max_frame = 100});
    expect_refusal(frame(Opcode::Binary, std::string(101, 'a')), kMessageTooBig,
                   ReaderLimits{.max_message = 100});
    // Fragments: refused when the declared lengths pass the bound, from the head alone.
    const std::string first = frame(Opcode::Binary, std::string(60, 'a'), false);
    const std::string second = frame(Opcode::Continuation, std::string(41, 'b'));
    Reader reader(ReaderLimits{.max_message = 100});
    Recorder events;
    const auto fed = feed_pieces(reader, events, first + second.substr(0, 6));
    EXPECT_EQ(fed.status, Status::Refused);
    EXPECT_EQ(reader.violation().code, kMessageTooBig);
    // Exactly at the bound is fine.
    Reader at(ReaderLimits{.max_message = 100});
    EXPECT_EQ(
        feed_pieces(at, events, first + frame(Opcode::Continuation, std::string(40, 'b'))).status,
        Status::More);
}

TEST(WebSocketReader, CloseFrames) {
    using namespace close_code;
    {
        Reader reader({});
        Recorder events;
        const std::string close = frame(Opcode::Close, close_payload(1000, "bye"));
        const std::string wire = frame(Opcode::Text, "a") + close + frame(Opcode::Text, "after");
        const auto fed = feed_pieces(reader, events, wire);
        EXPECT_EQ(fed.status, Status::Closed);
        EXPECT_EQ(fed.used, frame(Opcode::Text, "a").size() + close.size());
        EXPECT_EQ(events.log, (Log{"text:a", "close:1000:bye"}));
        std::string more = frame(Opcode::Text, "x");
        size_t used = 99;
        EXPECT_EQ(reader.feed(more.data(), more.size(), events, used), Status::Closed);
        EXPECT_EQ(used, 0u);
    }
    {
        Reader reader({});
        Recorder events;
        EXPECT_EQ(feed_pieces(reader, events, frame(Opcode::Close, "")).status, Status::Closed);
        EXPECT_EQ(events.log, (Log{"close:1005:"}));
    }
    {
        // A close between fragments ends the reading too.
        Reader reader({});
        Recorder events;
        EXPECT_EQ(feed_pieces(reader, events,
                              frame(Opcode::Text, "a", false) +
                                  frame(Opcode::Close, close_payload(4000, "")))
                      .status,
                  Status::Closed);
        EXPECT_EQ(events.log, (Log{"close:4000:"}));
        EXPECT_EQ(reader.buffered(), 0u);
    }
    expect_refusal(frame(Opcode::Close, "x"), kProtocolError);
    for (uint16_t code : {0, 999, 1004, 1005, 1006, 1016, 2000, 2999, 5000})
        expect_refusal(frame(Opcode::Close, close_payload(code, "")), kProtocolError);
    expect_refusal(frame(Opcode::Close, close_payload(1000, "\xC3")), kInvalidPayload);
}

TEST(WebSocketReader, AnEventReturningFalseStopsTheReader) {
    Reader reader({});
    Recorder events;
    events.stop_at = 1;
    const std::string a = frame(Opcode::Text, "a");
    const std::string b = frame(Opcode::Text, "b", false) + frame(Opcode::Continuation, "c");
    const std::string c = frame(Opcode::Ping, "d");
    std::string wire = a + b + c;
    size_t used = 0;
    EXPECT_EQ(reader.feed(wire.data(), wire.size(), events, used), Status::Stopped);
    EXPECT_EQ(used, a.size() + b.size());
    EXPECT_EQ(events.log, (Log{"text:a", "text:bc"}));
    // The rest, later.
    EXPECT_EQ(reader.feed(wire.data() + used, wire.size() - used, events, used), Status::More);
    EXPECT_EQ(events.log, (Log{"text:a", "text:bc", "ping:d"}));
}

TEST(WebSocketReader, AClientReadsServerFrames) {
    Reader reader(ReaderLimits{.expect_masked = false});
    Recorder events;
    std::string wire;
    append_frame(wire, Opcode::Text, std::string(70000, 'x'));
    append_frame(wire, Opcode::Ping, "hb");
    append_close_frame(wire, close_code::kGoingAway, "restart");
    const auto fed = feed_bytewise(reader, events, wire);
    EXPECT_EQ(fed.status, Status::Closed);
    ASSERT_EQ(events.log.size(), 3u);
    EXPECT_EQ(events.log[0], "text:" + std::string(70000, 'x'));
    EXPECT_EQ(events.log[2], "close:1001:restart");
}

// A conversation touching every path: whole frames, long lengths, fragments with control frames
// between, UTF-8 cut by fragments, empty frames, and a close.
std::string conversation() {
    std::string big;
    for (int i = 0; i < 300; ++i) big += "κόσμε";  // 16-bit length, multibyte
    return frame(Opcode::Text, "hello") + frame(Opcode::Binary, std::string(130, '\x80')) +
           frame(Opcode::Text, big) + frame(Opcode::Text, "\xF0\x9F", false) +
           frame(Opcode::Ping, "are you there") + frame(Opcode::Continuation, "", false) +
           frame(Opcode::Continuation, "\x98\x80!") + frame(Opcode::Pong, "") +
           frame(Opcode::Binary, "", false) + frame(Opcode::Continuation, std::string(70000, 'z')) +
           frame(Opcode::Close, close_payload(1000, "done"));
}

TEST(WebSocketReader, EverySplitPointGivesTheSameEvents) {
    const std::string wire = conversation();
    Reader whole_reader({});
    Recorder whole;
    ASSERT_EQ(feed_pieces(whole_reader, whole, wire).status, Status::Closed);
    ASSERT_EQ(whole.log.size(), 8u);
    EXPECT_EQ(whole.log[4], "text:\xF0\x9F\x98\x80!");

    Reader bytewise_reader({});
    Recorder bytewise;
    EXPECT_EQ(feed_bytewise(bytewise_reader, bytewise, wire).status, Status::Closed);
    EXPECT_EQ(bytewise.log, whole.log);

    // Cuts at every point of the part before the long last message (the rest is bytewise above).
    const size_t span = wire.size() - 70100;
    for (size_t cut = 1; cut < span; ++cut) {
        Reader reader({});
        Recorder events;
        const auto fed = feed_pieces(reader, events, wire, {cut, cut + 7});
        ASSERT_EQ(fed.status, Status::Closed) << cut;
        ASSERT_EQ(fed.used, wire.size()) << cut;
        ASSERT_EQ(events.log, whole.log) << cut;
        EXPECT_LE(reader.buffered(), 0u) << cut;
    }
}

TEST(WebSocketReader, BufferedIsBoundedByTheUnfinishedFrame) {
    Reader reader({});
    Recorder events;
    const std::string wire = frame(Opcode::Text, "abc", false) + frame(Opcode::Ping, "xy");
    EXPECT_EQ(feed_pieces(reader, events, wire.substr(0, wire.size() - 1)).status, Status::More);
    EXPECT_EQ(reader.buffered(), 3u + 1u) << "the fragment and the ping's first byte";
    // The ping's last byte, then the message's end.
    EXPECT_EQ(
        feed_pieces(reader, events, wire.substr(wire.size() - 1) + frame(Opcode::Continuation, "d"))
            .status,
        Status::More);
    EXPECT_EQ(events.log, (Log{"ping:xy", "text:abcd"}));
    EXPECT_EQ(reader.buffered(), 0u);
}

}  // namespace
}  // namespace rivet::http::ws
