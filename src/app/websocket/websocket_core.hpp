// What the framework keeps per WebSocket connection (detail::WebSocketCore, behind the public
// WebSocket and WebSocketHandle), per WebSocket route (WebSocketRoute), and how a 101 carries
// the new session through the Response (ResponseUpgrade, app/request/response_access.hpp).
#pragma once

#include <rivet/request.hpp>
#include <rivet/response.hpp>
#include <rivet/websocket.hpp>

#include <atomic>
#include <memory>
#include <string>
#include <vector>

#include "app/request/response_access.hpp"
#include "engine/reply.hpp"
#include "engine/websocket/session.hpp"
#include "net/ip_network.hpp"

namespace rivet::app {

class Topics;
class Operations;

// One App::ws() route: the user's behavior and the engine's limits made from its options.
struct WebSocketRoute {
    WebSocketBehavior behavior;
    engine::WebSocketConfig config;
    http::ws::DeflateConfig deflate;
    Topics* topics = nullptr;   // the App's, set when it starts
    Operations* ops = nullptr;  // the access log and metrics; set when it starts
};

}  // namespace rivet::app

namespace rivet::detail {

// One WebSocket connection as the application sees it. Shared by the connection's engine
// handler and by handles; everything but `closed` and `thread` belongs to the loop's thread.
struct WebSocketCore : std::enable_shared_from_this<WebSocketCore> {
    // From the upgrade request (its views end with it).
    WebSocketCore(app::WebSocketRoute& r, const Request& req);

    app::WebSocketRoute& route;
    engine::IoThread* thread = nullptr;           // the connection's, from the 101 on
    engine::WebSocketSession* session = nullptr;  // set while the connection is open
    std::atomic<bool> closed{false};
    std::string path;
    std::string subprotocol;
    net::IpAddress client;  // the peer (or whom a trusted proxy named)
    std::any data;
    std::vector<std::string> topics;  // subscribed to
    bool batched = false;             // holds published messages for one write (Topics)
    uint64_t opened_ns = 0;

    WebSocket facade() { return WebSocket(*this); }
    static WebSocketUpgrade upgrade_of(const Request& req) { return WebSocketUpgrade(req); }
    static engine::SessionFactory factory(std::shared_ptr<WebSocketCore> core,
                                          std::optional<http::ws::DeflateParams> deflate);
};

}  // namespace rivet::detail
