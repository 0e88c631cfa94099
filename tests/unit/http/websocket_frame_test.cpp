// WebSocket frame heads (RFC 6455 §5.2, §5.5): every refusal with its close code, lengths in their
// three forms, masking at any offset, the writers' minimal lengths; the handshake's keys.
#include <gtest/gtest.h>

#include <string>

#include "http/websocket/frame.hpp"
#include "http/websocket/handshake.hpp"

namespace rivet::http::ws {
namespace {

struct Parsed {
    HeadStatus status;
    FrameHead head;
    Violation violation;
};

Parsed parse(std::string_view bytes, FrameRules rules = {}) {
    Parsed p{};
    p.status = parse_frame_head(bytes, rules, p.head, p.violation);
    return p;
}

std::string bytes(std::initializer_list<int> list) {
    std::string s;
    for (int b : list) s += char(b);
    return s;
}

void expect_refused(std::string_view head, uint16_t code, FrameRules rules = {}) {
    const Parsed p = parse(head, rules);
    EXPECT_EQ(p.status, HeadStatus::Refused);
    EXPECT_EQ(p.violation.code, code);
    EXPECT_NE(std::string_view(p.violation.reason), "");
}

TEST(WebSocketFrame, MaskedTextHead) {
    const std::string head = bytes({0x81, 0x85, 1, 2, 3, 4});
    for (size_t n = 0; n < head.size(); ++n)
        EXPECT_EQ(parse(head.substr(0, n)).status, HeadStatus::Incomplete) << n;
    const Parsed p = parse(head + "abcde");
    ASSERT_EQ(p.status, HeadStatus::Complete);
    EXPECT_TRUE(p.head.fin);
    EXPECT_FALSE(p.head.rsv1);
    EXPECT_EQ(p.head.opcode, Opcode::Text);
    EXPECT_TRUE(p.head.masked);
    EXPECT_EQ(p.head.mask[0], 1);
    EXPECT_EQ(p.head.mask[3], 4);
    EXPECT_EQ(p.head.payload_length, 5u);
    EXPECT_EQ(p.head.head_length, 6u);
}

TEST(WebSocketFrame, SixteenAndSixtyFourBitLengths) {
    Parsed p = parse(bytes({0x82, 0xFE, 0x01, 0x00, 9, 9, 9, 9}));
    ASSERT_EQ(p.status, HeadStatus::Complete);
    EXPECT_EQ(p.head.payload_length, 256u);
    EXPECT_EQ(p.head.head_length, 8u);
    p = parse(bytes({0x82, 0xFF, 0, 0, 0, 0, 0, 1, 0, 0, 9, 9, 9, 9}));
    ASSERT_EQ(p.status, HeadStatus::Complete);
    EXPECT_EQ(p.head.payload_length, 65536u);
    EXPECT_EQ(p.head.head_length, 14u);
    // Not minimal, still accepted (the header's contract).
    p = parse(bytes({0x82, 0xFE, 0x00, 0x05, 9, 9, 9, 9}));
    ASSERT_EQ(p.status, HeadStatus::Complete);
    EXPECT_EQ(p.head.payload_length, 5u);
    // Unmasked, as a client's reader sees them.
    p = parse(bytes({0x88, 0x02}), FrameRules{.expect_masked = false});
    ASSERT_EQ(p.status, HeadStatus::Complete);
    EXPECT_FALSE(p.head.masked);
    EXPECT_EQ(p.head.head_length, 2u);
}

TEST(WebSocketFrame, EveryRefusalWithItsCode) {
    using namespace close_code;
    expect_refused(bytes({0xA1}), kProtocolError);  // RSV2, refused from the first byte
    expect_refused(bytes({0x91}), kProtocolError);  // RSV3
    expect_refused(bytes({0xA1}), kProtocolError, FrameRules{.rsv1_allowed = true});
    expect_refused(bytes({0xC1, 0x80, 0, 0, 0, 0}), kProtocolError);  // RSV1 not negotiated
    EXPECT_EQ(parse(bytes({0xC1, 0x80, 0, 0, 0, 0}), FrameRules{.rsv1_allowed = true}).status,
              HeadStatus::Complete);
    expect_refused(bytes({0xC0}), kProtocolError, FrameRules{.rsv1_allowed = true});  // cont.
    expect_refused(bytes({0xC9}), kProtocolError, FrameRules{.rsv1_allowed = true});  // ping
    for (int op : {3, 4, 5, 6, 7, 0xB, 0xC, 0xD, 0xE, 0xF})
        expect_refused(bytes({0x80 | op}), kProtocolError);
    expect_refused(bytes({0x09}), kProtocolError);        // fragmented ping
    expect_refused(bytes({0x08}), kProtocolError);        // fragmented close
    expect_refused(bytes({0x89, 0xFE}), kProtocolError);  // control over 125 (16-bit form)
    expect_refused(bytes({0x8A, 0xFF}), kProtocolError);  // pong, 64-bit length form
    EXPECT_EQ(parse(bytes({0x89, 0xFD, 0, 0, 0, 0})).status, HeadStatus::Complete);  // 125 ok
    expect_refused(bytes({0x81, 0x05}), kProtocolError);  // unmasked from a client
    expect_refused(bytes({0x81, 0x85}), kProtocolError, FrameRules{.expect_masked = false});
    expect_refused(bytes({0x82, 0xFF, 0x80, 0, 0, 0, 0, 0, 0, 0}), kProtocolError);  // top bit
    expect_refused(bytes({0x82, 0xFE, 0x01, 0x00}), kMessageTooBig, FrameRules{.max_frame = 255});
    EXPECT_EQ(
        parse(bytes({0x82, 0xFE, 0x00, 0xFF, 0, 0, 0, 0}), FrameRules{.max_frame = 255}).status,
        HeadStatus::Complete);
    expect_refused(bytes({0x82, 0xFF, 0, 0, 0, 1, 0, 0, 0, 0}), kMessageTooBig);  // 4 GiB
}

TEST(WebSocketFrame, UnmaskAtAnyOffsetMatchesOneByteAtATime) {
    const uint8_t mask[4] = {0x12, 0x34, 0x56, 0x78};
    std::string plain;
    for (int i = 0; i < 100; ++i) plain += char('a' + i % 26);
    std::string whole = plain;
    unmask(whole.data(), whole.size(), mask, 0);
    for (size_t i = 0; i < plain.size(); ++i)
        ASSERT_EQ(uint8_t(whole[i]), uint8_t(uint8_t(plain[i]) ^ mask[i % 4])) << i;
    for (size_t cut = 0; cut <= plain.size(); ++cut) {
        std::string split = plain;
        unmask(split.data(), cut, mask, 0);
        unmask(split.data() + cut, split.size() - cut, mask, cut);
        ASSERT_EQ(split, whole) << cut;
    }
}

TEST(WebSocketFrame, WritersUseTheMinimalLength) {
    char head[14];
    EXPECT_EQ(write_frame_head(head, Opcode::Text, 0), 2u);
    EXPECT_EQ(write_frame_head(head, Opcode::Text, 125), 2u);
    EXPECT_EQ(uint8_t(head[0]), 0x81);
    EXPECT_EQ(uint8_t(head[1]), 125);
    EXPECT_EQ(write_frame_head(head, Opcode::Binary, 126, false, true), 4u);
    EXPECT_EQ(uint8_t(head[0]), 0x42);
    EXPECT_EQ(bytes({head[1], head[2], head[3]}), bytes({126, 0, 126}));
    EXPECT_EQ(write_frame_head(head, Opcode::Binary, 65535), 4u);
    EXPECT_EQ(write_frame_head(head, Opcode::Binary, 65536), 10u);
    EXPECT_EQ(std::string(head + 1, 9), bytes({127, 0, 0, 0, 0, 0, 1, 0, 0}));

    // What the writers make, the parser reads back (a client's reader for server frames).
    for (uint64_t len : {0, 1, 125, 126, 65535, 65536}) {
        std::string out;
        append_frame(out, Opcode::Binary, std::string(len, 'x'));
        const Parsed p = parse(out, FrameRules{.expect_masked = false});
        ASSERT_EQ(p.status, HeadStatus::Complete);
        EXPECT_EQ(p.head.payload_length, len);
        EXPECT_EQ(p.head.head_length + len, out.size());
    }
}

TEST(WebSocketFrame, MaskedFrameRoundTrip) {
    std::string out;
    append_masked_frame(out, Opcode::Text, "Hello", 0x37fa213d);
    // RFC 6455 §5.7: a masked "Hello".
    EXPECT_EQ(out, bytes({0x81, 0x85, 0x37, 0xfa, 0x21, 0x3d, 0x7f, 0x9f, 0x4d, 0x51, 0x58}));
}

TEST(WebSocketFrame, CloseFrames) {
    std::string out;
    append_close_frame(out, close_code::kNormal, "bye");
    EXPECT_EQ(out, bytes({0x88, 5, 0x03, 0xE8, 'b', 'y', 'e'}));
    out.clear();
    append_close_frame(out, close_code::kNoStatus, "ignored");
    EXPECT_EQ(out, bytes({0x88, 0}));
    // A reason cut to 123 bytes, never inside a code point: 61 two-byte "é" are 122 bytes.
    std::string reason = "x";
    for (int i = 0; i < 70; ++i) reason += "\xC3\xA9";
    out.clear();
    append_close_frame(out, close_code::kGoingAway, reason);
    ASSERT_EQ(out.size(), 2u + 2 + 123);
    out.clear();
    append_close_frame(out, close_code::kGoingAway, reason.substr(1));
    ASSERT_EQ(out.size(), 2u + 2 + 122);
    EXPECT_EQ(out.substr(4), reason.substr(1, 122));
}

TEST(WebSocketFrame, ValidCloseCodes) {
    for (int c : {1000, 1001, 1002, 1003, 1007, 1008, 1009, 1010, 1011, 3000, 3999, 4000, 4999})
        EXPECT_TRUE(valid_close_code(uint16_t(c))) << c;
    for (int c : {0, 999, 1004, 1005, 1006, 1012, 1015, 1016, 1100, 2000, 2999, 5000, 65535})
        EXPECT_FALSE(valid_close_code(uint16_t(c))) << c;
}

TEST(WebSocketHandshake, AcceptKeyOfRfc6455) {
    // RFC 6455 §1.3 (and §4.2.2).
    EXPECT_EQ(accept_key("dGhlIHNhbXBsZSBub25jZQ=="), "s3pPLMBiTxaQ9kYGzzhZRbK+xOo=");
}

TEST(WebSocketHandshake, ValidKeys) {
    EXPECT_TRUE(valid_key("dGhlIHNhbXBsZSBub25jZQ=="));
    EXPECT_TRUE(valid_key("AQIDBAUGBwgJCgsMDQ4PEA=="));
    EXPECT_FALSE(valid_key(""));
    EXPECT_FALSE(valid_key("dGhlIHNhbXBsZSBub25jZQ="));    // 23
    EXPECT_FALSE(valid_key("dGhlIHNhbXBsZSBub25jZQ==="));  // 25
    EXPECT_FALSE(valid_key("dGhlIHNhbXBsZSBub25jZQAA"));   // 18 bytes' worth, no padding
    EXPECT_FALSE(valid_key("dGhlIHNhbXBsZSBub25j*Q=="));   // not base64
    EXPECT_FALSE(valid_key("dGhlIHNhbXBsZSBub25jZ=A="));
}

TEST(WebSocketHandshake, Tokens) {
    const auto t = split_tokens(" chat , ,superchat,\tv2.json ,");
    ASSERT_EQ(t.size(), 3u);
    EXPECT_EQ(t[0], "chat");
    EXPECT_EQ(t[1], "superchat");
    EXPECT_EQ(t[2], "v2.json");
    EXPECT_TRUE(split_tokens("").empty());
    EXPECT_TRUE(has_token("keep-alive, Upgrade", "upgrade"));
    EXPECT_TRUE(has_token("WebSocket", "websocket"));
    EXPECT_FALSE(has_token("keep-alive, Upgrades", "upgrade"));
    EXPECT_FALSE(has_token("", "upgrade"));
}

}  // namespace
}  // namespace rivet::http::ws
