// WebSocket framing (RFC 6455 §5): the frame head parsed from a view of the caller's buffer, with
// nothing allocated, and frames written for either side. Knows nothing of sockets or sessions;
// the message layer above it is reader.hpp.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>

namespace rivet::http::ws {

enum class Opcode : uint8_t {
    Continuation = 0x0,
    Text = 0x1,
    Binary = 0x2,
    Close = 0x8,
    Ping = 0x9,
    Pong = 0xA,
};

inline bool is_control(Opcode op) {
    return (uint8_t(op) & 0x8) != 0;
}

// Close codes (RFC 6455 §7.4.1) the server sends.
namespace close_code {
constexpr uint16_t kNormal = 1000;
constexpr uint16_t kGoingAway = 1001;
constexpr uint16_t kProtocolError = 1002;
constexpr uint16_t kUnsupportedData = 1003;
constexpr uint16_t kNoStatus = 1005;  // never on the wire: a close frame without a code
constexpr uint16_t kAbnormal = 1006;  // never on the wire: the connection ended without a close
constexpr uint16_t kInvalidPayload = 1007;
constexpr uint16_t kPolicyViolation = 1008;
constexpr uint16_t kMessageTooBig = 1009;
constexpr uint16_t kMandatoryExtension = 1010;
constexpr uint16_t kInternalError = 1011;
constexpr uint16_t kTryAgainLater = 1013;
}  // namespace close_code

// A code a peer may send in a close frame (§7.4): 1000-1003, 1007-1011, 3000-4999.
bool valid_close_code(uint16_t code);

struct FrameHead {
    bool fin = false;
    bool rsv1 = false;  // "compressed" under permessage-deflate, on a message's first frame
    Opcode opcode = Opcode::Continuation;
    bool masked = false;
    uint8_t mask[4] = {};
    uint64_t payload_length = 0;
    size_t head_length = 0;  // bytes of the head (2 to 14): the payload starts there
};

// Why a frame or message is refused: the close code to send and a reason for the log and the
// close frame.
struct Violation {
    uint16_t code = 0;  // 0: none
    const char* reason = "";
};

struct FrameRules {
    bool expect_masked = true;       // a server's reader: every client frame is masked (§5.1)
    bool rsv1_allowed = false;       // permessage-deflate was negotiated
    uint64_t max_frame = 16u << 20;  // payload bytes; past it: 1009
};

enum class HeadStatus { Incomplete, Complete, Refused };

// Parses the frame head at the start of `data`. Complete: `head` is filled (the payload may not
// have arrived yet). Refused: `violation` says why (reserved bits or opcodes, a fragmented or
// over-long control frame, a mask where none is expected or none where one is, a length not
// in its minimal form is accepted, a frame over max_frame).
HeadStatus parse_frame_head(std::string_view data, const FrameRules& rules, FrameHead& head,
                            Violation& violation);

// XORs `len` bytes with the mask, `offset` bytes into the frame's payload (for a payload that
// arrives in pieces).
void unmask(char* data, size_t len, const uint8_t mask[4], uint64_t offset);

// Server frames: unmasked. Appends the head and the payload.
void append_frame(std::string& out, Opcode op, std::string_view payload, bool fin = true,
                  bool rsv1 = false);
// Only the head (2 to 10 bytes), into `out`; returns its length. For a payload written apart
// (vectored writes, a shared published frame).
size_t write_frame_head(char out[14], Opcode op, uint64_t payload_length, bool fin = true,
                        bool rsv1 = false);
// A close frame's payload: the code, then the reason cut to fit 123 bytes on a UTF-8 boundary.
// kNoStatus (or kAbnormal), never on the wire, gives an empty payload.
void append_close_frame(std::string& out, uint16_t code, std::string_view reason);

// Client frames: masked with `mask_key` (the load generator, tests).
void append_masked_frame(std::string& out, Opcode op, std::string_view payload, uint32_t mask_key,
                         bool fin = true, bool rsv1 = false);

}  // namespace rivet::http::ws
