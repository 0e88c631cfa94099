// The demo's WebSocket endpoints:
//   GET /ws/echo   echoes every message, text and binary (permessage-deflate when offered)
//   GET /ws/chat   every message is published to the topic "chat": every /ws/chat client on
//                  every loop receives it (the sender too), and every /events client as a
//                  `chat` event (text only); with --pubsub redis, on every instance
#include "server/demo_routes.hpp"

namespace rivet::server {

void add_push_routes(App& app) {
    WebSocketBehavior echo;
    // A mirror compresses what it was sent compressed, small messages too (Autobahn's 12.*.1
    // and 13.*.1 send 16 bytes; kosoku 0.1.0 fails on an uncompressed answer there, which
    // RFC 7692 allows).
    echo.options.compression_min_size = 0;
    echo.on_message = [](WebSocket& ws, std::string_view message, MessageKind kind) {
        ws.send(message, kind);
    };
    app.ws("/ws/echo", std::move(echo));

    WebSocketBehavior chat;
    chat.options.max_message = 64 * 1024;  // a chat line, not a file
    chat.on_open = [](WebSocket& ws) { ws.subscribe("chat"); };
    chat.on_message = [&app](WebSocket&, std::string_view message, MessageKind kind) {
        app.publish("chat", message, kind);
    };
    app.ws("/ws/chat", std::move(chat));
}

}  // namespace rivet::server
