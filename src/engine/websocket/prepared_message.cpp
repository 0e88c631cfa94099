// PreparedMessage: one frame for many connections (pub/sub), compressed at most once per window
// size, by whichever loop needs it first.
#include <mutex>

#include "engine/websocket/session.hpp"

namespace rivet::engine {

struct PreparedMessage::Compressed {
    std::mutex mutex;
    bool made[16] = {};
    std::string frames[16];  // by window bits; empty: compression does not pay
};

PreparedMessage::PreparedMessage(http::ws::Opcode opcode, std::string_view payload)
    : payload_(payload),
      payload_size_(payload.size()),
      compressed_(std::make_shared<Compressed>()) {
    http::ws::append_frame(plain_, opcode, payload);
    opcode_ = opcode;
}

const std::string& PreparedMessage::compressed(uint8_t window_bits, int level,
                                               size_t min_size) const {
    static const std::string kNone;
    if (payload_.size() < min_size || window_bits > 15) return kNone;
    Compressed& c = *compressed_;
    std::lock_guard lock(c.mutex);
    if (!c.made[window_bits]) {
        c.made[window_bits] = true;
        // A compressor of its own, forgotten after this message: valid for every receiver
        // whose window is at least `window_bits`, whatever context it keeps.
        http::ws::Deflater deflater(level, window_bits, true);
        std::string packed;
        if (deflater.compress(payload_, packed) && packed.size() < payload_.size())
            http::ws::append_frame(c.frames[window_bits], opcode_, packed, true, true);
    }
    return c.frames[window_bits];
}

}  // namespace rivet::engine
