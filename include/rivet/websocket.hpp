// rivet::WebSocket: RFC 6455 connections on a route, with permessage-deflate, backpressure and
// pub/sub (topics every loop delivers to its own subscribers).
//
//   app.ws("/chat", {
//       .on_open = [](rivet::WebSocket& ws) { ws.subscribe("chat"); },
//       .on_message = [&app](rivet::WebSocket& ws, std::string_view msg, rivet::MessageKind) {
//           app.publish("chat", msg);
//       },
//   });
//
// The upgrade request goes through the rate limit, the middleware and the router like any GET,
// so a middleware (or on_upgrade) can refuse it (401, 403...) before the 101. A handshake that
// is not a valid WebSocket one is answered 400, or 426 with "Sec-WebSocket-Version: 13".
//
// Every callback runs on the connection's I/O loop and must not block. A WebSocket& is valid
// during the callback; to send later or from another thread keep a WebSocketHandle.
#pragma once

#include <any>
#include <chrono>
#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

namespace rivet {

class Request;

enum class MessageKind : uint8_t { Text, Binary };

enum class SendStatus : uint8_t {
    Sent,          // written, or queued under the send buffer's high-water mark
    Backpressure,  // queued past the high-water mark: wait for on_drain before sending more
    Dropped,       // not sent: the connection is closing or closed (a send past the send
                   // limit closes a client too slow to read, and is dropped)
};

// Close codes (RFC 6455 §7.4.1).
namespace ws_close {
constexpr uint16_t kNormal = 1000;
constexpr uint16_t kGoingAway = 1001;
constexpr uint16_t kProtocolError = 1002;
constexpr uint16_t kUnsupportedData = 1003;
constexpr uint16_t kNoStatus = 1005;  // the peer's close frame had no code
constexpr uint16_t kAbnormal = 1006;  // no close frame: the connection just ended
constexpr uint16_t kInvalidPayload = 1007;
constexpr uint16_t kPolicyViolation = 1008;
constexpr uint16_t kMessageTooBig = 1009;
constexpr uint16_t kInternalError = 1011;
constexpr uint16_t kTryAgainLater = 1013;
}  // namespace ws_close

struct WebSocketOptions {
    uint64_t max_message = 16u << 20;  // a received message, after inflating: past it 1009
    uint64_t max_frame = 16u << 20;    // one received frame's payload: past it 1009
    // permessage-deflate (RFC 7692) when the client offers it.
    bool compression = true;
    // The server's compressor forgets each message (less memory per connection, less ratio).
    bool compression_no_context_takeover = false;
    int compression_level = 6;         // zlib, 1..9
    size_t compression_min_size = 64;  // shorter messages are sent uncompressed
    // Queued output past which send() says Backpressure, and past which the client is closed
    // as too slow (counted in rivet_websocket_slow_closed_total) when a send finds output still
    // waiting: one message alone may be larger.
    size_t send_high_water = 1u << 20;
    size_t send_limit = 16u << 20;
    // Nothing received for ping_interval: a ping goes out; for idle_timeout: closed 1001.
    // Zero turns either off.
    std::chrono::milliseconds ping_interval{30'000};
    std::chrono::milliseconds idle_timeout{120'000};
    // Our close frame waits this long for the client's, then the connection ends.
    std::chrono::milliseconds close_timeout{5'000};
    // Subprotocols the route speaks, in its order of preference: the first one the client
    // offers (Sec-WebSocket-Protocol) is chosen; none in common: no subprotocol.
    std::vector<std::string> subprotocols{};
    // Browsers' Origin values allowed ("https://example.com"); empty: any. A request with
    // another Origin is answered 403; one without Origin (not a browser) is allowed.
    std::vector<std::string> allowed_origins{};
};

namespace detail {
struct WebSocketCore;
}

class WebSocketHandle;

class WebSocket {
public:
    SendStatus send(std::string_view message, MessageKind kind = MessageKind::Text);
    SendStatus send_binary(std::string_view message) { return send(message, MessageKind::Binary); }
    // Starts the close handshake: the code (1000, or 3000-4999 for the application's own) and
    // a reason of at most 123 bytes go to the client; on_close follows.
    void close(uint16_t code = ws_close::kNormal, std::string_view reason = {});
    // Output queued and not yet taken by the socket.
    size_t buffered() const;
    bool open() const;

    // Pub/sub: App::publish(topic, ...) reaches this connection while it is subscribed.
    void subscribe(std::string_view topic);
    void unsubscribe(std::string_view topic);

    const std::string& path() const;         // the upgrade request's path
    const std::string& subprotocol() const;  // chosen; empty: none
    std::string remote_address() const;
    unsigned loop_index() const;
    // The application's per-connection state: set in on_upgrade (from the request) or on_open.
    std::any& data();

    // For sending later, from any thread.
    WebSocketHandle handle() const;

private:
    friend struct detail::WebSocketCore;
    explicit WebSocket(detail::WebSocketCore& core) : core_(core) {}
    detail::WebSocketCore& core_;
};

// A connection, reachable from any thread, and after the callback that gave it. Copyable;
// keeping one keeps a little memory, never the connection.
class WebSocketHandle {
public:
    WebSocketHandle() = default;
    // Queues the message for the connection's loop (at once when called there). False: the
    // connection is known to be closed already.
    bool send(std::string message, MessageKind kind = MessageKind::Text) const;
    void close(uint16_t code = ws_close::kNormal, std::string reason = {}) const;
    // A hint from any thread (it may close right after).
    bool open() const;
    explicit operator bool() const { return core_ != nullptr; }

private:
    friend class WebSocket;
    explicit WebSocketHandle(std::shared_ptr<detail::WebSocketCore> core)
        : core_(std::move(core)) {}
    std::shared_ptr<detail::WebSocketCore> core_;
};

// The handshake, before the 101: the request as it came, for a decision.
class WebSocketUpgrade {
public:
    const Request& request() const { return request_; }
    // Kept for the connection (WebSocket::data()).
    std::any data;

private:
    friend struct detail::WebSocketCore;
    friend class App;
    explicit WebSocketUpgrade(const Request& r) : request_(r) {}
    const Request& request_;
};

struct WebSocketBehavior {
    // Before the 101, on the loop: throw rivet::HttpError (401, 403...) to refuse.
    std::function<void(WebSocketUpgrade&)> on_upgrade;
    std::function<void(WebSocket&)> on_open;
    std::function<void(WebSocket&, std::string_view message, MessageKind kind)> on_message;
    // The send buffer fell back under its high-water mark after a Backpressure.
    std::function<void(WebSocket&)> on_drain;
    // Once, last: the client's close code (1005: none in its frame; 1006: no close frame), or
    // ours when we failed the connection (1002, 1007, 1008, 1009...).
    std::function<void(WebSocket&, uint16_t code, std::string_view reason)> on_close;
    WebSocketOptions options{};
};

}  // namespace rivet
