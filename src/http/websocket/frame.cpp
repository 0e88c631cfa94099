// WebSocket frames (RFC 6455 §5.2): the head's refusals in the order the bytes arrive, so a bad
// first byte is refused before the length is known.
#include "http/websocket/frame.hpp"

#include <cstring>

namespace rivet::http::ws {

bool valid_close_code(uint16_t code) {
    return (code >= 1000 && code <= 1003) || (code >= 1007 && code <= 1011) ||
           (code >= 3000 && code <= 4999);
}

namespace {

HeadStatus refuse(Violation& violation, uint16_t code, const char* reason) {
    violation.code = code;
    violation.reason = reason;
    return HeadStatus::Refused;
}

bool known_opcode(uint8_t op) {
    return op <= 0x2 || (op >= 0x8 && op <= 0xA);
}

}  // namespace

HeadStatus parse_frame_head(std::string_view data, const FrameRules& rules, FrameHead& head,
                            Violation& violation) {
    using namespace close_code;
    if (data.empty()) return HeadStatus::Incomplete;
    const uint8_t b0 = uint8_t(data[0]);
    if (b0 & 0x30) return refuse(violation, kProtocolError, "reserved bits RSV2/RSV3 set");
    const uint8_t op = b0 & 0x0F;
    if (!known_opcode(op)) return refuse(violation, kProtocolError, "reserved opcode");
    const bool fin = (b0 & 0x80) != 0;
    const bool rsv1 = (b0 & 0x40) != 0;
    const bool control = (op & 0x8) != 0;
    if (rsv1) {
        if (!rules.rsv1_allowed) return refuse(violation, kProtocolError, "RSV1 set");
        if (control) return refuse(violation, kProtocolError, "RSV1 on a control frame");
        if (op == 0) return refuse(violation, kProtocolError, "RSV1 on a continuation frame");
    }
    if (control && !fin) return refuse(violation, kProtocolError, "fragmented control frame");
    if (data.size() < 2) return HeadStatus::Incomplete;

    const uint8_t b1 = uint8_t(data[1]);
    const bool masked = (b1 & 0x80) != 0;
    if (masked != rules.expect_masked)
        return refuse(violation, kProtocolError, masked ? "masked frame" : "unmasked frame");
    const uint8_t len7 = b1 & 0x7F;
    if (control && len7 > 125)
        return refuse(violation, kProtocolError, "control frame payload over 125 bytes");
    size_t length_bytes = len7 == 126 ? 2 : len7 == 127 ? 8 : 0;
    const size_t head_length = 2 + length_bytes + (masked ? 4 : 0);
    if (data.size() < 2 + length_bytes) return HeadStatus::Incomplete;
    uint64_t length = len7;
    if (length_bytes != 0) {
        length = 0;
        for (size_t i = 0; i < length_bytes; ++i) length = (length << 8) | uint8_t(data[2 + i]);
        if (length >> 63) return refuse(violation, kProtocolError, "64-bit length's top bit set");
    }
    // Checked before the mask arrives: a 1009 need not wait for 4 more bytes.
    if (length > rules.max_frame) return refuse(violation, kMessageTooBig, "frame too big");
    if (data.size() < head_length) return HeadStatus::Incomplete;

    head.fin = fin;
    head.rsv1 = rsv1;
    head.opcode = Opcode(op);
    head.masked = masked;
    if (masked)
        std::memcpy(head.mask, data.data() + 2 + length_bytes, 4);
    else
        std::memset(head.mask, 0, 4);
    head.payload_length = length;
    head.head_length = head_length;
    return HeadStatus::Complete;
}

void unmask(char* data, size_t len, const uint8_t mask[4], uint64_t offset) {
    // The mask repeated over 8 bytes, starting at the key byte `offset` points to: XORed a word at
    // a time (the payload of a large message is most of the reader's work).
    uint8_t pattern[8];
    for (size_t i = 0; i < 8; ++i) pattern[i] = mask[(offset + i) & 3];
    uint64_t word_mask;
    std::memcpy(&word_mask, pattern, 8);
    size_t i = 0;
    for (; i + 8 <= len; i += 8) {
        uint64_t word;
        std::memcpy(&word, data + i, 8);
        word ^= word_mask;
        std::memcpy(data + i, &word, 8);
    }
    for (; i < len; ++i) data[i] = char(uint8_t(data[i]) ^ pattern[i & 7]);
}

size_t write_frame_head(char out[14], Opcode op, uint64_t payload_length, bool fin, bool rsv1) {
    out[0] = char((fin ? 0x80 : 0) | (rsv1 ? 0x40 : 0) | uint8_t(op));
    if (payload_length < 126) {
        out[1] = char(payload_length);
        return 2;
    }
    if (payload_length <= 0xFFFF) {
        out[1] = char(126);
        out[2] = char(payload_length >> 8);
        out[3] = char(payload_length);
        return 4;
    }
    out[1] = char(127);
    for (int i = 0; i < 8; ++i) out[2 + i] = char(payload_length >> (56 - 8 * i));
    return 10;
}

void append_frame(std::string& out, Opcode op, std::string_view payload, bool fin, bool rsv1) {
    char head[14];
    const size_t n = write_frame_head(head, op, payload.size(), fin, rsv1);
    out.append(head, n);
    out.append(payload);
}

void append_close_frame(std::string& out, uint16_t code, std::string_view reason) {
    // 1005 and 1006 are never on the wire: a close without a code has an empty payload.
    if (code == close_code::kNoStatus || code == close_code::kAbnormal) {
        append_frame(out, Opcode::Close, {});
        return;
    }
    if (reason.size() > 123) {
        size_t cut = 123;
        // Back off to the first byte of a code point (never a continuation byte 10xxxxxx).
        while (cut > 0 && (uint8_t(reason[cut]) & 0xC0) == 0x80) --cut;
        reason = reason.substr(0, cut);
    }
    char payload[125];
    payload[0] = char(code >> 8);
    payload[1] = char(code);
    if (!reason.empty()) std::memcpy(payload + 2, reason.data(), reason.size());
    append_frame(out, Opcode::Close, std::string_view(payload, 2 + reason.size()));
}

void append_masked_frame(std::string& out, Opcode op, std::string_view payload, uint32_t mask_key,
                         bool fin, bool rsv1) {
    char head[14];
    size_t n = write_frame_head(head, op, payload.size(), fin, rsv1);
    head[1] = char(uint8_t(head[1]) | 0x80);
    const uint8_t mask[4] = {uint8_t(mask_key >> 24), uint8_t(mask_key >> 16),
                             uint8_t(mask_key >> 8), uint8_t(mask_key)};
    std::memcpy(head + n, mask, 4);
    n += 4;
    out.append(head, n);
    const size_t start = out.size();
    out.append(payload);
    unmask(out.data() + start, payload.size(), mask, 0);
}

}  // namespace rivet::http::ws
