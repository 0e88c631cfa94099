// The message layer: frames in any pieces, one pass over the caller's bytes. A frame that is a
// whole message (or a whole control frame) and lies wholly in the buffer is unmasked there and
// handed over as a view; every other payload is unmasked piece by piece as it arrives and
// appended to message_ (data, inflated when compressed) or partial_ (control, 125 bytes at most).
#include "http/websocket/reader.hpp"

#include <algorithm>
#include <cstring>

namespace rivet::http::ws {

namespace {

// A message buffer bigger than this is given back after its message, not kept for the next.
constexpr size_t kKeptCapacity = 64 * 1024;
// A frame head is at most 14 bytes: 2, 8 of length, 4 of mask.
constexpr size_t kMaxHead = 14;

}  // namespace

Reader::Reader(const ReaderLimits& limits, Inflater* inflater)
    : limits_(limits), inflater_(inflater) {
    rules_.expect_masked = limits.expect_masked;
    rules_.rsv1_allowed = inflater != nullptr;
    rules_.max_frame = limits.max_frame;
}

Reader::Step Reader::refuse(uint16_t code, const char* reason) {
    violation_.code = code;
    violation_.reason = reason;
    return Step::Refused;
}

Reader::Status Reader::feed(char* data, size_t len, ReaderEvents& events, size_t& used) {
    used = 0;
    if (refused_) return Status::Refused;
    if (closed_) return Status::Closed;
    events_ = &events;
    size_t pos = 0;
    Step step = Step::Go;
    while (step == Step::Go) {
        if (!have_head_) {
            if (pos == len) break;
            step = read_head(data, len, pos);
            if (step != Step::Go || !have_head_) continue;
            step = start_frame();
            if (step != Step::Go) break;
        }
        const bool control = is_control(head_.opcode);
        const uint64_t need = head_.payload_length - received_;
        const size_t avail = len - pos;
        char* piece = data + pos;
        const bool whole_message =
            !control && head_.fin && head_.opcode != Opcode::Continuation && !head_.rsv1;
        if (received_ == 0 && avail >= need && (control || whole_message)) {
            // The whole frame is here: no copy.
            if (head_.masked) unmask(piece, need, head_.mask, 0);
            pos += need;
            have_head_ = false;
            const std::string_view payload(piece, need);
            step = control ? Reader::control(payload) : deliver(head_.opcode, payload);
            continue;
        }
        const size_t take = size_t(std::min<uint64_t>(avail, need));
        if (head_.masked) unmask(piece, take, head_.mask, received_);
        pos += take;
        received_ += take;
        const bool frame_end = received_ == head_.payload_length;
        if (control) {
            partial_.append(piece, take);
        } else {
            step = payload_piece(piece, take, frame_end);
            if (step != Step::Go) break;
        }
        if (!frame_end) break;  // every byte was used
        have_head_ = false;
        if (control) {
            // Out of partial_ first: the event may stop the reader, which must be left clean.
            char payload[125];
            const size_t n = partial_.size();
            std::memcpy(payload, partial_.data(), n);
            partial_.clear();
            step = Reader::control(std::string_view(payload, n));
        } else {
            step = finish_data_frame();
        }
    }
    events_ = nullptr;
    used = pos;
    switch (step) {
        case Step::Go:
            return Status::More;
        case Step::Stopped:
            return Status::Stopped;
        case Step::Closed:
            closed_ = true;
            partial_.clear();
            message_.clear();
            return Status::Closed;
        case Step::Refused:
            break;
    }
    refused_ = true;
    return Status::Refused;
}

Reader::Step Reader::read_head(char* data, size_t len, size_t& pos) {
    HeadStatus status;
    if (partial_.empty()) {
        status =
            parse_frame_head(std::string_view(data + pos, len - pos), rules_, head_, violation_);
        if (status == HeadStatus::Incomplete) {
            partial_.assign(data + pos, len - pos);
            pos = len;
            return Step::Go;
        }
        if (status == HeadStatus::Refused) return Step::Refused;
        pos += head_.head_length;
    } else {
        // The head's start is held from an earlier feed(): complete it with at most what a head
        // can need, then give back what the payload starts with.
        const size_t held = partial_.size();
        const size_t take = std::min(len - pos, kMaxHead - held);
        partial_.append(data + pos, take);
        status = parse_frame_head(partial_, rules_, head_, violation_);
        if (status == HeadStatus::Incomplete) {
            pos += take;
            return Step::Go;
        }
        if (status == HeadStatus::Refused) return Step::Refused;
        pos += head_.head_length - held;
        partial_.clear();
    }
    have_head_ = true;
    received_ = 0;
    return Step::Go;
}

Reader::Step Reader::start_frame() {
    using namespace close_code;
    if (is_control(head_.opcode)) return Step::Go;  // may come between fragments
    if (head_.opcode == Opcode::Continuation) {
        if (message_opcode_ == Opcode::Continuation)
            return refuse(kProtocolError, "continuation frame without a message");
    } else {
        if (message_opcode_ != Opcode::Continuation)
            return refuse(kProtocolError, "new message inside a fragmented one");
        message_opcode_ = head_.opcode;
        message_compressed_ = head_.rsv1;
        utf8_.reset();
        message_.clear();
    }
    // Uncompressed, the declared lengths tell at once (message_ never passes the bound).
    if (!message_compressed_ && head_.payload_length > limits_.max_message - message_.size())
        return refuse(kMessageTooBig, "message too big");
    return Step::Go;
}

Reader::Step Reader::payload_piece(const char* piece, size_t n, bool frame_end) {
    using namespace close_code;
    const size_t before = message_.size();
    if (message_compressed_) {
        const bool last = frame_end && head_.fin;
        if (n == 0 && !last) return Step::Go;
        const auto result =
            inflater_->decompress(std::string_view(piece, n), last, message_, limits_.max_message);
        if (result == Inflater::Result::Corrupt)
            return refuse(kInvalidPayload, "invalid compressed data");
        if (result == Inflater::Result::TooBig) {
            // Bad text within the bound came first in the message: 1007, as it would have been
            // had the frame come in smaller pieces.
            const std::string_view within =
                std::string_view(message_).substr(0, limits_.max_message).substr(before);
            if (message_opcode_ == Opcode::Text && !utf8_.feed(within))
                return refuse(kInvalidPayload, "text is not UTF-8");
            return refuse(kMessageTooBig, "message too big");
        }
    } else {
        message_.append(piece, n);
    }
    if (message_opcode_ == Opcode::Text && !utf8_.feed(std::string_view(message_).substr(before)))
        return refuse(kInvalidPayload, "text is not UTF-8");
    return Step::Go;
}

Reader::Step Reader::finish_data_frame() {
    if (!head_.fin) return Step::Go;
    if (message_opcode_ == Opcode::Text && !utf8_.complete())
        return refuse(close_code::kInvalidPayload, "text is not UTF-8");
    const bool go = events_->on_message(message_opcode_, message_);
    end_message();
    return go ? Step::Go : Step::Stopped;
}

Reader::Step Reader::deliver(Opcode opcode, std::string_view payload) {
    if (opcode == Opcode::Text && !valid_utf8(payload))
        return refuse(close_code::kInvalidPayload, "text is not UTF-8");
    end_message();
    return events_->on_message(opcode, payload) ? Step::Go : Step::Stopped;
}

void Reader::end_message() {
    message_opcode_ = Opcode::Continuation;
    message_compressed_ = false;
    utf8_.reset();
    if (message_.capacity() > kKeptCapacity)
        std::string().swap(message_);
    else
        message_.clear();
}

Reader::Step Reader::control(std::string_view payload) {
    using namespace close_code;
    switch (head_.opcode) {
        case Opcode::Ping:
            return events_->on_ping(payload) ? Step::Go : Step::Stopped;
        case Opcode::Pong:
            return events_->on_pong(payload) ? Step::Go : Step::Stopped;
        default:
            break;
    }
    // Close (§5.5.1, §7.4): nothing, or a code and a UTF-8 reason.
    uint16_t code = kNoStatus;
    std::string_view reason;
    if (payload.size() == 1) return refuse(kProtocolError, "close frame with a 1-byte payload");
    if (payload.size() >= 2) {
        code = uint16_t(uint8_t(payload[0]) << 8 | uint8_t(payload[1]));
        if (!valid_close_code(code)) return refuse(kProtocolError, "invalid close code");
        reason = payload.substr(2);
        if (!valid_utf8(reason)) return refuse(kInvalidPayload, "close reason is not UTF-8");
    }
    events_->on_close(code, reason);
    return Step::Closed;
}

}  // namespace rivet::http::ws
