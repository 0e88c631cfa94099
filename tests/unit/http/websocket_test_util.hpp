// What the WebSocket reader tests share: an event recorder and a feeder that splits the input.
#pragma once

#include <string>
#include <vector>

#include "http/websocket/reader.hpp"

namespace rivet::http::ws::test {

// Writes every event as a line: "text:PAYLOAD", "binary:...", "ping:...", "pong:...",
// "close:CODE:REASON".
struct Recorder : ReaderEvents {
    std::vector<std::string> log;
    int stop_at = -1;  // the event (0-based) that returns false
    const char* last_payload = nullptr;

    bool record(std::string line) {
        log.push_back(std::move(line));
        return int(log.size()) - 1 != stop_at;
    }
    bool on_message(Opcode op, std::string_view payload) override {
        last_payload = payload.data();
        return record((op == Opcode::Text ? "text:" : "binary:") + std::string(payload));
    }
    bool on_ping(std::string_view p) override { return record("ping:" + std::string(p)); }
    bool on_pong(std::string_view p) override { return record("pong:" + std::string(p)); }
    bool on_close(uint16_t code, std::string_view reason) override {
        return record("close:" + std::to_string(code) + ":" + std::string(reason));
    }
};

struct Fed {
    Reader::Status status;
    size_t used = 0;  // in all
};

// Feeds `wire` (a copy: the reader unmasks in place) in pieces cut at `cuts` (ascending), stopping
// at the first status other than More.
inline Fed feed_pieces(Reader& reader, Recorder& events, std::string wire,
                       const std::vector<size_t>& cuts = {}) {
    Fed fed{Reader::Status::More, 0};
    size_t start = 0;
    std::vector<size_t> ends = cuts;
    ends.push_back(wire.size());
    for (size_t end : ends) {
        size_t used = 0;
        fed.status = reader.feed(wire.data() + start, end - start, events, used);
        fed.used += used;
        if (fed.status != Reader::Status::More) break;
        start = end;
    }
    return fed;
}

inline Fed feed_bytewise(Reader& reader, Recorder& events, const std::string& wire) {
    std::vector<size_t> cuts;
    for (size_t i = 1; i < wire.size(); ++i) cuts.push_back(i);
    return feed_pieces(reader, events, wire, cuts);
}

}  // namespace rivet::http::ws::test
