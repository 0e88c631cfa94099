// permessage-deflate: RFC 7692's own examples, round trips with and without context takeover, the
// inflate bound against a deflate bomb, corrupt streams, the window of 8, and compressed messages
// through the reader (fragmented, at every split point).
#include <gtest/gtest.h>
#include <zlib.h>

#include <string>
#include <vector>

#include "http/websocket/deflate.hpp"
#include "http/websocket/reader.hpp"
#include "websocket_test_util.hpp"

namespace rivet::http::ws {
namespace {

using Result = Inflater::Result;
using Status = Reader::Status;
using test::feed_bytewise;
using test::feed_pieces;
using test::Recorder;
using Log = std::vector<std::string>;

std::string bytes(std::initializer_list<int> list) {
    std::string s;
    for (int b : list) s += char(b);
    return s;
}

std::string inflate_all(Inflater& inflater, std::string_view compressed, size_t max = 1 << 20) {
    std::string out;
    EXPECT_EQ(inflater.decompress(compressed, true, out, max), Result::Ok);
    return out;
}

TEST(WebSocketDeflate, Rfc7692Examples) {
    Inflater inflater(15, false);
    // §7.2.3.1: "Hello", compressed; §7.2.3.2: the same again, referring to the first.
    EXPECT_EQ(inflate_all(inflater, bytes({0xf2, 0x48, 0xcd, 0xc9, 0xc9, 0x07, 0x00})), "Hello");
    EXPECT_EQ(inflate_all(inflater, bytes({0xf2, 0x00, 0x11, 0x00, 0x00})), "Hello");
    // §7.2.3.3: a stored block; §7.2.3.6: an empty message is one 0x00 byte.
    Inflater fresh(15, true);
    EXPECT_EQ(inflate_all(fresh, bytes({0x00, 0x05, 0x00, 0xfa, 0xff, 'H', 'e', 'l', 'l', 'o', 0})),
              "Hello");
    EXPECT_EQ(inflate_all(fresh, bytes({0x00})), "");
    // §7.2.3.1's message in two pieces (the tail is added at the last).
    std::string out;
    EXPECT_EQ(fresh.decompress(bytes({0xf2, 0x48, 0xcd}), false, out, 100), Result::Ok);
    EXPECT_EQ(fresh.decompress(bytes({0xc9, 0xc9, 0x07, 0x00}), true, out, 100), Result::Ok);
    EXPECT_EQ(out, "Hello");
}

TEST(WebSocketDeflate, RoundTripWithContextTakeover) {
    Deflater deflater(6, 15, false);
    Inflater inflater(15, false);
    const std::string message = "the same sentence, sent twice over the one connection";
    std::string first, second;
    ASSERT_TRUE(deflater.compress(message, first));
    ASSERT_TRUE(deflater.compress(message, second));
    EXPECT_LT(second.size(), first.size()) << "the second refers to the first";
    EXPECT_NE(first.substr(first.size() >= 4 ? first.size() - 4 : 0), bytes({0, 0, 0xff, 0xff}));
    EXPECT_EQ(inflate_all(inflater, first), message);
    EXPECT_EQ(inflate_all(inflater, second), message);
    // An empty message round-trips too, and leaves both sides in step: right after a flush zlib
    // writes nothing for it, so the deflater sends §7.2.3.6's 0x00.
    std::string empty;
    ASSERT_TRUE(deflater.compress("", empty));
    EXPECT_EQ(empty, bytes({0x00}));
    EXPECT_EQ(inflate_all(inflater, empty), "");
    std::string third;
    ASSERT_TRUE(deflater.compress(message, third));
    EXPECT_EQ(inflate_all(inflater, third), message);
    // A peer that sends no bytes at all for an empty message: still empty, still in step.
    EXPECT_EQ(inflate_all(inflater, ""), "");
    std::string fourth;
    ASSERT_TRUE(deflater.compress(message, fourth));
    EXPECT_EQ(inflate_all(inflater, fourth), message);
}

TEST(WebSocketDeflate, RoundTripWithoutContextTakeover) {
    Deflater deflater(6, 15, true);
    const std::string message = "the same sentence, sent twice over the one connection";
    std::string first, second;
    ASSERT_TRUE(deflater.compress(message, first));
    ASSERT_TRUE(deflater.compress(message, second));
    EXPECT_EQ(first, second) << "nothing is remembered between messages";
    // Each decodes alone, by a fresh inflater and by one that resets.
    Inflater resetting(15, true);
    EXPECT_EQ(inflate_all(resetting, first), message);
    EXPECT_EQ(inflate_all(resetting, second), message);
    Inflater alone(15, false);
    EXPECT_EQ(inflate_all(alone, second), message);

    // reset(): a deflater that remembers forgets once.
    Deflater remembering(6, 15, false);
    std::string a, b;
    ASSERT_TRUE(remembering.compress(message, a));
    remembering.reset();
    ASSERT_TRUE(remembering.compress(message, b));
    EXPECT_EQ(a, b);
}

TEST(WebSocketDeflate, LargeMessagesAndSmallWindows) {
    std::string message;
    for (int i = 0; i < 20000; ++i) message += std::to_string(i * 7919 % 1000) + ",";
    for (uint8_t bits : {9, 12, 15}) {
        Deflater deflater(9, bits, false);
        Inflater inflater(bits, false);
        for (int round = 0; round < 2; ++round) {
            std::string compressed;
            ASSERT_TRUE(deflater.compress(message, compressed));
            EXPECT_LT(compressed.size(), message.size() / 2);
            EXPECT_EQ(inflate_all(inflater, compressed, message.size()), message) << int(bits);
        }
    }
}

TEST(WebSocketDeflate, AWindowOfEightInflatesWhatZlibMakesForIt) {
    // zlib's raw deflate refuses a window of 8 (it would silently use 9 for a zlib stream); a
    // client asking for 8 with zlib compresses with 9. Our inflater for 8 must take that.
    z_stream z{};
    EXPECT_NE(deflateInit2(&z, 6, Z_DEFLATED, -8, 8, Z_DEFAULT_STRATEGY), Z_OK);
    ASSERT_EQ(deflateInit2(&z, 6, Z_DEFLATED, -9, 8, Z_DEFAULT_STRATEGY), Z_OK);
    std::string message;
    for (int i = 0; i < 200; ++i) message += "0123456789abcdefghijklmnopqrstuvwxyz"[i % 36];
    message += message.substr(0, 150);  // a match ~400 bytes back: past 256, within 512
    std::string out(1024, '\0');
    z.next_in = reinterpret_cast<Bytef*>(message.data());
    z.avail_in = uInt(message.size());
    z.next_out = reinterpret_cast<Bytef*>(out.data());
    z.avail_out = uInt(out.size());
    ASSERT_EQ(deflate(&z, Z_SYNC_FLUSH), Z_OK);
    out.resize(out.size() - z.avail_out - 4);  // without 00 00 FF FF
    deflateEnd(&z);
    Inflater inflater(8, false);
    EXPECT_EQ(inflate_all(inflater, out), message);
}

TEST(WebSocketDeflate, ABombIsStoppedAtTheBound) {
    const std::string zeros(10 << 20, '\0');
    Deflater deflater(9, 15, false);
    std::string bomb;
    ASSERT_TRUE(deflater.compress(zeros, bomb));
    ASSERT_LT(bomb.size(), 20000u);
    const size_t max = 1 << 20;
    Inflater inflater(15, false);
    std::string out;
    EXPECT_EQ(inflater.decompress(bomb, true, out, max), Result::TooBig);
    EXPECT_LE(out.size(), max + 1);
    EXPECT_LE(out.capacity(), 2 * max + 64 * 1024) << "memory stays near the bound";
    // In pieces, the bound holds across them.
    Inflater pieces(15, false);
    std::string out2;
    Result r = Result::Ok;
    for (size_t i = 0; i < bomb.size() && r == Result::Ok; i += 100)
        r = pieces.decompress(std::string_view(bomb).substr(i, 100), i + 100 >= bomb.size(), out2,
                              max);
    EXPECT_EQ(r, Result::TooBig);
    EXPECT_LE(out2.size(), max + 1);
    // At the bound exactly, fine.
    Inflater exact(15, false);
    std::string out3;
    EXPECT_EQ(exact.decompress(bomb, true, out3, zeros.size()), Result::Ok);
    EXPECT_EQ(out3, zeros);
}

TEST(WebSocketDeflate, CorruptStreams) {
    Inflater a(15, false);
    std::string out;
    // Block type 11 is reserved.
    EXPECT_EQ(a.decompress(bytes({0xff, 0xff, 0xff}), true, out, 100), Result::Corrupt);
    // A stored block whose length and its complement disagree.
    Inflater b(15, false);
    EXPECT_EQ(b.decompress(bytes({0x00, 0x05, 0x00, 0x00, 0x00, 'H'}), true, out, 100),
              Result::Corrupt);
    // A distance before the start of the window.
    Inflater c(15, true);
    EXPECT_EQ(c.decompress(bytes({0xf2, 0x00, 0x11, 0x00, 0x00}), true, out, 100), Result::Corrupt);
}

// A client's compressed message as frames: the compressed bytes cut into `fragments` frames,
// RSV1 on the first only.
std::string compressed_frames(Deflater& deflater, Opcode op, std::string_view message,
                              size_t fragments = 1) {
    std::string payload;
    EXPECT_TRUE(deflater.compress(message, payload));
    std::string out;
    const size_t step = payload.size() / fragments + 1;
    for (size_t i = 0; i < fragments; ++i) {
        const std::string_view part = std::string_view(payload).substr(
            std::min(payload.size(), i * step), i + 1 == fragments ? std::string::npos : step);
        append_masked_frame(out, i == 0 ? op : Opcode::Continuation, part, 0x01020304,
                            i + 1 == fragments, i == 0);
    }
    return out;
}

std::string masked(Opcode op, std::string_view payload, bool fin = true) {
    std::string out;
    append_masked_frame(out, op, payload, 0x55AA55AA, fin);
    return out;
}

TEST(WebSocketDeflate, CompressedMessagesThroughTheReaderAtEverySplit) {
    for (bool takeover : {true, false}) {
        Deflater client(6, 15, !takeover);
        std::string big;
        for (int i = 0; i < 2000; ++i) big += "déjà vu " + std::to_string(i % 10);
        // One statement each: the compressor's context makes the order matter.
        std::string wire = compressed_frames(client, Opcode::Text, "Hello");
        wire += compressed_frames(client, Opcode::Text, "Hello");
        wire += masked(Opcode::Text, "plain");  // RSV1 off: not compressed
        wire += compressed_frames(client, Opcode::Binary, "");
        // Fragmented, with a ping between (built by hand to put the ping in the middle).
        std::string payload;
        ASSERT_TRUE(client.compress(big, payload));
        const size_t half = payload.size() / 2;
        append_masked_frame(wire, Opcode::Text, std::string_view(payload).substr(0, half), 7, false,
                            true);
        wire += masked(Opcode::Ping, "mid");
        append_masked_frame(wire, Opcode::Continuation, std::string_view(payload).substr(half), 9,
                            true, false);
        wire += masked(Opcode::Close, bytes({0x03, 0xe8}));
        const Log expected{"text:Hello", "text:Hello",  "text:plain", "binary:",
                           "ping:mid",   "text:" + big, "close:1000:"};

        Inflater inflater(15, !takeover);
        Reader reader({}, &inflater);
        Recorder events;
        ASSERT_EQ(feed_pieces(reader, events, wire).status, Status::Closed)
            << reader.violation().reason << " " << testing::PrintToString(events.log);
        EXPECT_EQ(events.log, expected);

        Inflater inflater2(15, !takeover);
        Reader bytewise({}, &inflater2);
        Recorder events2;
        ASSERT_EQ(feed_bytewise(bytewise, events2, wire).status, Status::Closed);
        EXPECT_EQ(events2.log, expected);

        for (size_t cut = 1; cut < wire.size(); cut += 3) {
            Inflater inf(15, !takeover);
            Reader r({}, &inf);
            Recorder ev;
            ASSERT_EQ(feed_pieces(r, ev, wire, {cut}).status, Status::Closed) << cut;
            ASSERT_EQ(ev.log, expected) << cut;
        }
    }
}

TEST(WebSocketDeflate, ReaderRefusals) {
    using namespace close_code;
    auto refused = [](const std::string& wire, ReaderLimits limits = {}) {
        Inflater inflater(15, false);
        Reader reader(limits, &inflater);
        Recorder events;
        EXPECT_EQ(feed_pieces(reader, events, wire).status, Status::Refused);
        EXPECT_LE(reader.buffered(), limits.max_message + 1);
        return reader.violation().code;
    };
    Deflater client(6, 15, true);
    // Inflated text that is not UTF-8.
    EXPECT_EQ(refused(compressed_frames(client, Opcode::Text, "bad \xC0\xAF")), kInvalidPayload);
    // A corrupt stream.
    std::string corrupt;
    append_masked_frame(corrupt, Opcode::Binary, bytes({0xff, 0xff, 0xff}), 1, true, true);
    EXPECT_EQ(refused(corrupt), kInvalidPayload);
    // RSV1 on a continuation frame.
    std::string wire = compressed_frames(client, Opcode::Text, "abc", 1);
    wire[0] = char(uint8_t(wire[0]) & 0x7F);  // not fin
    append_masked_frame(wire, Opcode::Continuation, "x", 1, true, true);
    EXPECT_EQ(refused(wire), kProtocolError);
    // The bomb, 10 MB of zeros in ~10 kB, against a 1 MB message bound.
    Deflater bomber(9, 15, false);
    EXPECT_EQ(refused(compressed_frames(bomber, Opcode::Binary, std::string(10 << 20, '\0'), 3),
                      ReaderLimits{.max_message = 1 << 20}),
              kMessageTooBig);
}

TEST(WebSocketDeflate, BadTextBeforeTheBoundIsRefusedAsBadTextInAnyPieces) {
    // Invalid UTF-8 first, then more zeros than the bound: whether the frame comes whole (the
    // bound is passed in the same inflate) or a byte at a time, the first fault is the text.
    Deflater client(6, 15, true);
    std::string message = "ok \xC0";
    message += std::string(5000, '\0');
    const std::string wire = compressed_frames(client, Opcode::Text, message);
    for (bool bytewise : {false, true}) {
        Inflater inflater(15, true);
        Reader reader(ReaderLimits{.max_message = 1000}, &inflater);
        Recorder events;
        const auto fed =
            bytewise ? feed_bytewise(reader, events, wire) : feed_pieces(reader, events, wire);
        EXPECT_EQ(fed.status, Status::Refused);
        EXPECT_EQ(reader.violation().code, close_code::kInvalidPayload) << bytewise;
    }
    // Valid text past the bound: 1009.
    std::string valid(5000, 'a');
    Inflater inflater(15, true);
    Reader reader(ReaderLimits{.max_message = 1000}, &inflater);
    Recorder events;
    EXPECT_EQ(feed_pieces(reader, events, compressed_frames(client, Opcode::Text, valid)).status,
              Status::Refused);
    EXPECT_EQ(reader.violation().code, close_code::kMessageTooBig);
}

}  // namespace
}  // namespace rivet::http::ws
