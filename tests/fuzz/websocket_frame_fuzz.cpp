// libFuzzer target: the WebSocket reader (frames, fragments, UTF-8, close frames), with and
// without permessage-deflate.
//
// The first input byte picks the reader's settings (an Inflater or none, its context takeover,
// masked or unmasked frames, small limits so the 1009 paths are reached) and the split points;
// the rest is the byte stream. Beyond the sanitizers' checks, it traps when the reader's promises
// fail: the stream fed whole, in three pieces and (when short) a byte at a time giving different
// events, statuses or close codes; a Text message that is not UTF-8; a message or control payload
// over its bound; a close code a peer may not send; more bytes used than given; memory held past
// the bounds.
#include <cstddef>
#include <cstdint>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "http/websocket/deflate.hpp"
#include "http/websocket/reader.hpp"
#include "http/websocket/utf8.hpp"

using namespace rivet::http::ws;

namespace {

void check(bool ok) {
    if (!ok) __builtin_trap();
}

struct Settings {
    ReaderLimits limits;
    bool compressed = false;
    bool no_context_takeover = false;
    uint8_t window_bits = 15;
};

struct Checker : ReaderEvents {
    const ReaderLimits* limits = nullptr;
    std::string log;  // every event, length-prefixed so that no two logs read alike

    void add(char kind, std::string_view payload) {
        log += kind;
        log += std::to_string(payload.size());
        log += ':';
        log.append(payload);
    }
    bool on_message(Opcode op, std::string_view payload) override {
        check(op == Opcode::Text || op == Opcode::Binary);
        check(payload.size() <= limits->max_message);
        if (op == Opcode::Text) check(valid_utf8(payload));
        add(op == Opcode::Text ? 'T' : 'B', payload);
        return true;
    }
    bool on_ping(std::string_view payload) override {
        check(payload.size() <= 125);
        add('P', payload);
        return true;
    }
    bool on_pong(std::string_view payload) override {
        check(payload.size() <= 125);
        add('O', payload);
        return true;
    }
    bool on_close(uint16_t code, std::string_view reason) override {
        check(code == close_code::kNoStatus ? reason.empty() : valid_close_code(code));
        check(reason.size() <= 123 && valid_utf8(reason));
        add('C', std::to_string(code) + "/" + std::string(reason));
        return true;
    }
};

struct Outcome {
    Reader::Status status;
    uint16_t code;
    std::string log;
    size_t used;
};

// Feeds `in` cut at `cuts` (ascending, within the input) into a fresh reader.
Outcome run(const Settings& s, std::string_view in, const std::vector<size_t>& cuts) {
    std::unique_ptr<Inflater> inflater;
    if (s.compressed) inflater = std::make_unique<Inflater>(s.window_bits, s.no_context_takeover);
    Reader reader(s.limits, inflater.get());
    Checker events;
    events.limits = &s.limits;
    std::string buffer(in);  // the reader unmasks in place
    Outcome out{Reader::Status::More, 0, {}, 0};
    size_t start = 0;
    std::vector<size_t> ends = cuts;
    ends.push_back(buffer.size());
    for (size_t end : ends) {
        size_t used = 0;
        out.status = reader.feed(buffer.data() + start, end - start, events, used);
        check(used <= end - start);
        out.used += used;
        // What is held: an unfinished head or control payload, and a message within its bound
        // (one byte past it, when inflating shows the bound passed).
        check(reader.buffered() <= s.limits.max_message + 1 + 125);
        if (out.status != Reader::Status::More) break;
        check(used == end - start);
        start = end;
    }
    out.code = out.status == Reader::Status::Refused ? reader.violation().code : 0;
    if (out.status == Reader::Status::Refused)
        check(out.code == close_code::kProtocolError || out.code == close_code::kInvalidPayload ||
              out.code == close_code::kMessageTooBig);
    out.log = std::move(events.log);
    return out;
}

bool same(const Outcome& a, const Outcome& b) {
    if (a.status != b.status || a.code != b.code || a.log != b.log) return false;
    // Where the reading ended is the same, but for a refusal (found at any byte of a piece).
    return a.status == Reader::Status::Refused || a.used == b.used;
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
    if (size == 0) return 0;
    const uint8_t ctl = data[0];
    const std::string_view in(reinterpret_cast<const char*>(data + 1), size - 1);
    Settings s;
    s.compressed = ctl & 0x01;
    s.no_context_takeover = ctl & 0x02;
    s.window_bits = (ctl & 0x04) ? 8 + (ctl >> 5) : 15;  // 8..15
    s.limits.expect_masked = !(ctl & 0x08);
    if (ctl & 0x10) {
        s.limits.max_frame = 1 + (ctl >> 5) * 40;
        s.limits.max_message = 1 + (ctl >> 4) * 25;
    } else {
        s.limits.max_message = 1 << 20;  // a bomb is stopped here, not at 16 MiB
    }

    const Outcome whole = run(s, in, {});
    check(whole.used <= in.size());
    if (whole.status == Reader::Status::More) check(whole.used == in.size());

    const size_t a = in.empty() ? 0 : (ctl * 2654435761u + size) % (in.size() + 1);
    const size_t b = in.empty() ? 0 : (size * 40503u + ctl) % (in.size() + 1);
    std::vector<size_t> cuts{std::min(a, b), std::max(a, b)};
    check(same(whole, run(s, in, cuts)));

    if (in.size() <= 256) {
        std::vector<size_t> every;
        for (size_t i = 1; i < in.size(); ++i) every.push_back(i);
        check(same(whole, run(s, in, every)));
    }
    return 0;
}
