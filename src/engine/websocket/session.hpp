// WebSocketSession: RFC 6455 on a connection's transport, after an HTTP/1.1 101 handed it over
// (Reply::then). The codec (http/websocket/) turns bytes into messages and back; this session
// owns what lies between it and the socket: reading, the output and its bounds (backpressure),
// the close handshake, keep-alive pings and the idle timeout. What a message means is the
// application's: it sees one WebSocketHandler per connection, called on the connection's loop.
#pragma once

#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <string_view>

#include "engine/connection.hpp"
#include "engine/session.hpp"
#include "http/websocket/deflate.hpp"
#include "http/websocket/reader.hpp"

namespace rivet::engine {

class IoThread;
class WebSocketSession;

// Limits and timers of one WebSocket connection (the application's per-route options).
struct WebSocketConfig {
    http::ws::ReaderLimits limits;
    // Queued output past which send() says Backpressure (the application should wait for
    // on_drain), and past which the client is too slow: closed (1008), counted (when output
    // was already waiting: one message alone may be larger).
    size_t send_high_water = 1u << 20;
    size_t send_limit = 16u << 20;
    uint64_t ping_ms = 30'000;   // nothing received for this long: a ping goes out (0: never)
    uint64_t idle_ms = 120'000;  // nothing received for this long: closed 1001 (0: never)
    uint64_t close_ms = 5'000;   // our close frame waits this long for the peer's, then the TCP
    int deflate_level = 6;
    size_t deflate_min_size = 64;  // shorter messages are sent as they are
};

// A message made once for many connections (a published one): the frame as it leaves, plain and
// (made when first needed, on any loop) compressed for the connections that agreed to deflate.
class PreparedMessage {
public:
    PreparedMessage(http::ws::Opcode opcode, std::string_view payload);
    const std::string& plain() const { return plain_; }
    // The compressed frame for a compressor of `window_bits` with no shared context: what a
    // connection with permessage-deflate sends (it then resets its own compressor). Empty when
    // compression does not pay (then plain() is sent).
    const std::string& compressed(uint8_t window_bits, int level, size_t min_size) const;
    size_t payload_size() const { return payload_size_; }

private:
    http::ws::Opcode opcode_;
    std::string plain_;
    std::string payload_;  // kept for the compressed copies
    size_t payload_size_;
    struct Compressed;
    std::shared_ptr<Compressed> compressed_;
};

// The application's side of one WebSocket, called on the connection's loop thread. The session
// owns it; on_close comes once, last, whatever ended the connection (the code is 1006 when no
// close frame was exchanged).
class WebSocketHandler {
public:
    virtual ~WebSocketHandler() = default;
    virtual void on_open(WebSocketSession& ws) = 0;
    virtual void on_message(WebSocketSession& ws, http::ws::Opcode opcode,
                            std::string_view payload) = 0;
    // The queued output went back under the high-water mark after a send said Backpressure.
    virtual void on_drain(WebSocketSession& ws) = 0;
    virtual void on_close(WebSocketSession& ws, uint16_t code, std::string_view reason) = 0;
};

class WebSocketSession final : public Session, private http::ws::ReaderEvents {
public:
    enum class State : uint8_t {
        Open,
        Closing,  // our close frame is queued or sent: waiting for the peer's, then the close
        Closed,   // the connection is gone (or going): nothing is sent any more
    };
    enum class SendResult : uint8_t {
        Sent,          // written or queued under the high-water mark
        Backpressure,  // queued, but the output is past the high-water mark: wait for on_drain
        Dropped,       // not sent: the connection is closing or closed (or was just closed as
                       // too slow by this send)
    };
    // Data messages and their payload bytes as the application sent and received them (before
    // compression, after inflating).
    struct Counters {
        uint64_t messages_in = 0, messages_out = 0, bytes_in = 0, bytes_out = 0;
    };

    // `config` is the route's and outlives its connections; `deflate`: what this connection's
    // handshake agreed for permessage-deflate (RFC 7692), none: plain frames only.
    WebSocketSession(Connection& connection, const WebSocketConfig& config,
                     std::optional<http::ws::DeflateParams> deflate,
                     std::unique_ptr<WebSocketHandler> handler);
    ~WebSocketSession() override;

    SendResult send(http::ws::Opcode opcode, std::string_view payload);
    SendResult send(const PreparedMessage& message);
    // Sends between begin_batch() and end_batch() are queued and written by one flush at the
    // end (a loop delivering several published messages to each subscriber).
    void begin_batch() { batching_ = true; }
    void end_batch() {
        batching_ = false;
        flush();
    }
    // Starts the close handshake (Open only): the code and reason go out in our close frame.
    void close(uint16_t code, std::string_view reason);
    // Output queued and not yet taken by the socket (transport backlog excluded).
    size_t buffered() const { return out_.size() - out_sent_; }
    State state() const { return state_; }
    const Counters& counters() const { return counters_; }
    Connection& connection() { return conn_; }
    bool compressing() const { return deflater_ != nullptr; }

    // Session.
    void start(std::string_view input) override;
    void on_readable() override;
    void on_writable() override;
    void on_timeout() override;
    void on_closed() override;
    void close_when_idle() override;
    void complete(uint64_t, Reply&&) override {}  // no HTTP answers are owed any more

private:
    // ReaderEvents.
    bool on_message(http::ws::Opcode opcode, std::string_view payload) override;
    bool on_ping(std::string_view payload) override;
    bool on_pong(std::string_view payload) override;
    bool on_close(uint16_t code, std::string_view reason) override;

    // What the input side does (the State says what the WebSocket does).
    enum class Phase : uint8_t {
        Reading,    // frames are read (after our close frame too, until the peer's)
        Failing,    // the peer's close frame came, or it broke the protocol: nothing more is
                    // read; once our output (the close frame) is out, our side shuts
        Lingering,  // our side is shut: input is dropped until the peer's FIN or close_ms
    };
    // Sends made during one of our events are written once, at its end.
    struct Batch {
        explicit Batch(WebSocketSession& s) : s_(s), was_(s.batching_) { s.batching_ = true; }
        ~Batch() { s_.batching_ = was_; }
        WebSocketSession& s_;
        bool was_;
    };

    void read_input(char* data, size_t len);
    bool reading_stopped() const { return phase_ != Phase::Reading; }
    void refuse(const http::ws::Violation& v);
    void begin_closing(uint16_t code, std::string_view reason);
    // Appends a frame to the output (compressed when agreed and worth it) and, outside a
    // batch, writes it.
    SendResult queue_frame(http::ws::Opcode opcode, std::string_view payload, bool compress);
    SendResult after_queue(size_t waiting_before);
    void flush();
    void after_flush();
    void update_interest();
    void arm_timer();
    void close_now();

    Connection& conn_;
    IoThread& owner_;
    const WebSocketConfig& config_;
    std::optional<http::ws::DeflateParams> deflate_;
    std::unique_ptr<WebSocketHandler> handler_;
    std::unique_ptr<http::ws::Inflater> inflater_;
    std::unique_ptr<http::ws::Deflater> deflater_;
    http::ws::Reader reader_;
    std::string out_;
    size_t out_sent_ = 0;
    std::string scratch_;  // a compressed message on its way into a frame
    State state_ = State::Open;
    Phase phase_ = Phase::Reading;
    bool batching_ = false;
    bool peer_closed_ = false;    // the peer's close frame arrived
    bool backpressured_ = false;  // a send said Backpressure: on_drain is owed
    bool ping_sent_ = false;      // a keep-alive ping is out for this quiet period
    uint16_t close_code_ = http::ws::close_code::kAbnormal;  // the peer's, for on_close
    uint16_t sent_code_ = 0;                                 // ours, once sent
    std::string close_reason_;
    uint64_t last_in_ms_ = 0;
    uint64_t closing_since_ms_ = 0;
    Counters counters_;
};

}  // namespace rivet::engine
