// bench/ws_load's connections and their epoll loop: non-blocking connects (a bounded number
// opening at once, so a listen backlog is never the thing measured), the opening handshake, and
// a streaming reader of server frames that copies a message's bytes only when asked to (a 16 KiB
// echo is counted and its first bytes checked; every 64th, or a compressed one, is kept whole).
// What to do with a message is the mode's (ws_load.cpp): Loop calls its Handler.
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "wire.hpp"

namespace wsload {

struct Settings {
    std::string host = "127.0.0.1";
    int port = 0;
    std::string path = "/ws/echo";
    bool deflate = false;   // offer permessage-deflate
    int max_opening = 256;  // connections in their connect or handshake at once
};

struct Sent {
    uint32_t seq;
    uint64_t t_ns;
};

struct Conn {
    enum class State { New, Connecting, Handshaking, Open, Closed };
    int fd = -1;
    uint32_t index = 0;
    State state = State::New;
    std::string key;
    std::string in;  // the handshake answer, then a frame head split across reads
    std::string out;
    size_t out_off = 0;
    bool watching_out = false;
    // The frame and the message being received.
    bool in_frame = false;
    FrameHead head;
    uint64_t frame_left = 0;
    bool in_message = false;
    uint8_t msg_opcode = 0;
    bool msg_rsv1 = false;
    bool collecting = false;
    uint64_t msg_len = 0;
    uint8_t prefix[16] = {};
    std::string body;            // the whole message, when collecting
    std::string control;         // a control frame's payload
    bool deflate = false;        // permessage-deflate negotiated
    bool reset_inflate = false;  // ... with server_no_context_takeover
    std::unique_ptr<Inflater> inflater;
    // The mode's state: messages in flight (a ring of `depth`), sequence numbers, counts.
    std::vector<Sent> ring;
    size_t ring_head = 0, ring_count = 0;
    uint32_t next_seq = 1;
    uint32_t last_seq = 0;
    uint32_t done = 0;
    uint8_t mask[4] = {};
    std::string frame;  // the mode's prepared frame (masked), patched per message
};

// A whole message as received: its first bytes always, the whole of it when collected (or
// inflated).
struct Message {
    uint8_t opcode;
    uint64_t length;
    std::string_view prefix;  // up to 16 bytes
    std::string_view body;    // empty unless collected
};

struct Errors {
    uint64_t connect = 0;    // connect() failed, or the server closed before the handshake
    uint64_t handshake = 0;  // not a 101, or a wrong Sec-WebSocket-Accept
    uint64_t protocol = 0;   // a frame no server may send, or a message that does not inflate
    uint64_t closed = 0;     // the server closed an open connection (close frame or EOF)
    uint64_t verify = 0;     // an echo of the wrong length, content or order (the mode's)
    uint64_t total() const { return connect + handshake + protocol + closed + verify; }
};

class Handler {
public:
    virtual ~Handler() = default;
    virtual void on_open(Conn& c) = 0;
    // Whether to keep the whole of the message that starts now (its bytes are copied).
    virtual bool collect(Conn& c) = 0;
    virtual void on_message(Conn& c, const Message& m) = 0;
};

uint64_t now_ns();

class Loop {
public:
    Loop(Settings settings, Handler& handler);
    ~Loop();

    // Makes n connections (not yet opened); returns the first index.
    size_t add(size_t n);
    Conn& conn(size_t i) { return *conns_[i]; }
    size_t size() const { return conns_.size(); }

    // Opens every connection not yet opened, at most max_opening at a time; true when each
    // is open or failed before the deadline.
    bool open_all(uint64_t deadline_ns);
    // Runs the loop until done() or the deadline (monotonic ns).
    template <typename Done>
    void run_until(Done done, uint64_t deadline_ns) {
        while (!done() && now_ns() < deadline_ns) poll_once(deadline_ns);
    }
    void poll_once(uint64_t deadline_ns);

    // Sends bytes (writes at once; what the socket does not take waits for EPOLLOUT).
    void send(Conn& c, std::string_view bytes);
    void close_all();

    size_t open_count() const { return open_; }
    size_t failed_count() const { return failed_; }
    Errors errors;

private:
    void start_connect(Conn& c);
    void on_event(Conn& c, uint32_t events);
    void on_handshake_bytes(Conn& c, const char* p, size_t n);
    void on_frame_bytes(Conn& c, const uint8_t* p, size_t n);
    void start_frame(Conn& c);
    void frame_payload(Conn& c, const uint8_t* p, size_t n);
    void end_frame(Conn& c);
    void flush(Conn& c);
    void watch(Conn& c, bool out);
    void fail(Conn& c, uint64_t& counter);

    Settings s_;
    Handler& handler_;
    int ep_ = -1;
    std::vector<std::unique_ptr<Conn>> conns_;
    size_t next_to_open_ = 0;
    size_t opening_ = 0;
    size_t open_ = 0;
    size_t failed_ = 0;
    std::string request_tail_;  // the handshake request after the key
    std::vector<uint8_t> buf_;
};

}  // namespace wsload
