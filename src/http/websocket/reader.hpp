// The WebSocket message layer (RFC 6455 §5.4-5.6, RFC 7692): bytes in, whole messages and
// control frames out. Fragments are joined (control frames may come between them), text is
// checked as UTF-8 across fragments, compressed messages are inflated within the message bound.
// A message that arrives whole in one frame is unmasked in the caller's buffer and handed over
// as a view of it: no copy. Either side's reader (expect_masked): the server's and the load
// generator's.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>

#include "http/websocket/deflate.hpp"
#include "http/websocket/frame.hpp"
#include "http/websocket/utf8.hpp"

namespace rivet::http::ws {

struct ReaderLimits {
    bool expect_masked = true;
    uint64_t max_frame = 16u << 20;    // one frame's payload, as received (1009 past it)
    uint64_t max_message = 16u << 20;  // a whole message, after inflating (1009 past it)
};

// What the reader found; each returns false to stop reading (the session closed, say): feed()
// then returns at once.
class ReaderEvents {
public:
    virtual ~ReaderEvents() = default;
    // A whole message (Text: valid UTF-8). `payload` is valid only during the call.
    virtual bool on_message(Opcode opcode, std::string_view payload) = 0;
    virtual bool on_ping(std::string_view payload) = 0;
    virtual bool on_pong(std::string_view payload) = 0;
    // A close frame: `code` is kNoStatus when it carried none (its reason then empty). A close
    // frame with a bad code, a 1-byte payload or a reason that is not UTF-8 is a violation
    // instead (1002 or 1007). Nothing is read after it.
    virtual bool on_close(uint16_t code, std::string_view reason) = 0;
};

class Reader {
public:
    // `inflater`: set when permessage-deflate was negotiated (RSV1 is then allowed on a
    // message's first frame); the reader does not own it.
    Reader(const ReaderLimits& limits, Inflater* inflater = nullptr);

    enum class Status {
        More,     // everything was used; more bytes are needed for the next frame
        Stopped,  // an event returned false: the rest of `data` was not looked at
        Closed,   // a close frame was read: nothing more will be
        Refused,  // a violation (violation() says which): the connection must close with it
    };
    // Reads every frame in `data` (which it may unmask in place) and keeps the bytes of an
    // unfinished frame. `used` says how much of `data` was consumed (all of it, but for Stopped
    // and Closed).
    Status feed(char* data, size_t len, ReaderEvents& events, size_t& used);
    const Violation& violation() const { return violation_; }
    // Bytes held for an unfinished frame or message (memory accounting, tests).
    size_t buffered() const { return partial_.size() + message_.size(); }

private:
    enum class Step { Go, Stopped, Closed, Refused };
    Step refuse(uint16_t code, const char* reason);
    Step read_head(char* data, size_t len, size_t& pos);
    Step start_frame();  // the message-level checks once a head is read
    // A piece of a data frame's payload, unmasked, not taken whole; `frame_end`: its last.
    Step payload_piece(const char* piece, size_t n, bool frame_end);
    Step finish_data_frame();
    Step deliver(Opcode opcode, std::string_view payload);
    Step control(std::string_view payload);
    void end_message();

    ReaderLimits limits_;
    Inflater* inflater_;
    ReaderEvents* events_ = nullptr;  // during feed()
    FrameRules rules_;
    Violation violation_;
    std::string partial_;  // an unfinished head, or the payload of an unfinished control frame
    std::string message_;  // a message arriving in pieces: fragments joined, or inflated
    Utf8Validator utf8_;
    FrameHead head_;
    bool have_head_ = false;                        // head_ is read; its payload is arriving
    uint64_t received_ = 0;                         // bytes of head_'s payload read so far
    Opcode message_opcode_ = Opcode::Continuation;  // Continuation: no message in progress
    bool message_compressed_ = false;
    bool closed_ = false;
    bool refused_ = false;
};

}  // namespace rivet::http::ws
