// The demo's WebSocket endpoints:
//   GET /ws/echo   echoes every message, text and binary (permessage-deflate when offered)
//   GET /ws/chat   every message is published to the topic "chat": every /ws/chat client on
//                  every loop receives it (the sender too)
#include "server/demo_routes.hpp"

namespace rivet::server {

void add_push_routes(App& app) {
    WebSocketBehavior echo;
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
