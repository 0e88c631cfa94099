// App::ws: the opening handshake (RFC 6455 §4.2) as a GET route's handler, after the rate
// limit and the middleware like any request, and App::publish.
#include <rivet/app.hpp>
#include <rivet/header_fields.hpp>
#include <rivet/http_error.hpp>

#include <algorithm>

#include "app/app_impl.hpp"
#include "app/websocket/topics.hpp"
#include "app/websocket/websocket_core.hpp"
#include "http/websocket/handshake.hpp"

namespace rivet {

namespace {

bool iequal(std::string_view a, std::string_view b) {
    return a.size() == b.size() && std::equal(a.begin(), a.end(), b.begin(), [](char x, char y) {
               return (x | 0x20) == (y | 0x20);
           });
}

// Every value of the field `name`, joined with ", " (a list field may come in several lines).
std::string joined(const Request& req, std::string_view name) {
    std::string out;
    for (HeaderField f : req.headers()) {
        if (!iequal(f.name, name)) continue;
        if (!out.empty()) out += ", ";
        out += f.value;
    }
    return out;
}

engine::WebSocketConfig engine_config(const WebSocketOptions& o) {
    engine::WebSocketConfig c;
    c.limits.max_message = o.max_message;
    c.limits.max_frame = std::min(o.max_frame, o.max_message);
    c.send_high_water = o.send_high_water;
    c.send_limit = std::max(o.send_limit, o.send_high_water);
    c.ping_ms = uint64_t(o.ping_interval.count());
    c.idle_ms = uint64_t(o.idle_timeout.count());
    c.close_ms = uint64_t(o.close_timeout.count());
    c.deflate_level = o.compression_level;
    c.deflate_min_size = o.compression_min_size;
    return c;
}

void check_options(const WebSocketOptions& o) {
    if (o.max_message == 0 || o.max_frame == 0)
        throw std::invalid_argument("WebSocketOptions: max_message and max_frame must be > 0");
    if (o.compression_level < 1 || o.compression_level > 9)
        throw std::invalid_argument("WebSocketOptions: compression_level must be 1..9");
    if (o.send_high_water == 0)
        throw std::invalid_argument("WebSocketOptions: send_high_water must be > 0");
    if (o.close_timeout.count() <= 0)
        throw std::invalid_argument("WebSocketOptions: close_timeout must be > 0");
}

// The handshake's checks, in the order a client is told what is wrong; then the 101.
void handshake(app::WebSocketRoute& route, Request& req, Response& res) {
    if (req.version_minor() < 1) throw HttpError(400, "WebSocket needs HTTP/1.1");
    if (!http::ws::has_token(req.header("Upgrade"), "websocket") ||
        !http::ws::has_token(joined(req, "Connection"), "upgrade"))
        throw HttpError(426, "this resource is a WebSocket: send Upgrade: websocket")
            .header("Upgrade", "websocket");
    if (req.header("Sec-WebSocket-Version") != "13")
        throw HttpError(426, "unsupported Sec-WebSocket-Version (13 is)")
            .header("Sec-WebSocket-Version", "13");
    std::string_view key = req.header("Sec-WebSocket-Key");
    if (!http::ws::valid_key(key)) throw HttpError(400, "missing or invalid Sec-WebSocket-Key");
    const auto& options = route.behavior.options;
    if (!options.allowed_origins.empty() && req.has_header("Origin")) {
        std::string_view origin = req.header("Origin");
        auto& allowed = options.allowed_origins;
        if (std::none_of(allowed.begin(), allowed.end(),
                         [&](const std::string& o) { return iequal(o, origin); }))
            throw HttpError(403, "this Origin may not open a WebSocket here");
    }

    auto core = std::make_shared<detail::WebSocketCore>(route, req);
    if (!options.subprotocols.empty()) {
        const std::string field = joined(req, "Sec-WebSocket-Protocol");
        auto offered = http::ws::split_tokens(field);  // views into `field`
        for (const auto& ours : options.subprotocols)
            if (std::find(offered.begin(), offered.end(), ours) != offered.end()) {
                core->subprotocol = ours;
                break;
            }
    }
    std::optional<http::ws::DeflateParams> deflate;
    std::string extension;
    if (route.deflate.enabled) {
        http::ws::DeflateParams params;
        bool malformed = false;
        std::string offers = joined(req, "Sec-WebSocket-Extensions");
        if (!offers.empty() &&
            http::ws::negotiate_deflate(offers, route.deflate, params, extension, malformed))
            deflate = params;
        else if (malformed)
            throw HttpError(400, "malformed Sec-WebSocket-Extensions");
    }

    // Empty when the digest failed: no memory, or a server whose OpenSSL could not be loaded
    // (src/server/openssl_on_use.cpp) at this call; the next handshake tries again.
    const std::string accept = http::ws::accept_key(key);
    if (accept.empty()) throw HttpError(503, "the handshake's key cannot be computed now");

    WebSocketUpgrade upgrade = detail::WebSocketCore::upgrade_of(req);
    if (route.behavior.on_upgrade) route.behavior.on_upgrade(upgrade);  // may refuse (throws)
    core->data = std::move(upgrade.data);

    res.header("Upgrade", "websocket");
    res.header("Sec-WebSocket-Accept", accept);
    if (!core->subprotocol.empty()) res.header("Sec-WebSocket-Protocol", core->subprotocol);
    if (deflate) res.header("Sec-WebSocket-Extensions", extension);
    auto hand_over = std::make_shared<detail::ResponseUpgrade>();
    hand_over->make = detail::WebSocketCore::factory(std::move(core), deflate);
    detail::ResponseAccess::upgrade(res, std::move(hand_over));
}

}  // namespace

App::Route App::ws(std::string_view pattern, WebSocketBehavior behavior) {
    check_options(behavior.options);
    auto route = std::make_shared<app::WebSocketRoute>();
    route->config = engine_config(behavior.options);
    route->deflate.enabled = behavior.options.compression;
    route->deflate.server_no_context_takeover = behavior.options.compression_no_context_takeover;
    route->deflate.level = behavior.options.compression_level;
    route->deflate.min_size = behavior.options.compression_min_size;
    route->behavior = std::move(behavior);
    impl_->websocket_routes.push_back(route);
    return get(pattern, [route](Request& req, Response& res) { handshake(*route, req, res); });
}

void App::Impl::deliver_locally(std::string_view topic, std::string_view message,
                                MessageKind kind) {
    auto prepared = std::make_shared<const engine::PreparedMessage>(
        kind == MessageKind::Binary ? http::ws::Opcode::Binary : http::ws::Opcode::Text, message);
    topics->publish(topic, std::move(prepared));
    if (kind == MessageKind::Text) stream_topics.publish(topic, message);
}

void App::publish(std::string_view topic, std::string_view message, MessageKind kind) {
    if (!impl_->topics) return;  // not running: nobody is subscribed
    // Here at once, never back through Redis (app/websocket/topic_relay.hpp says why).
    impl_->deliver_locally(topic, message, kind);
    if (impl_->relay) impl_->relay->share(topic, message, kind);
}

void App::subscribe(std::string_view topic, const EventStream& stream) {
    impl_->stream_topics.subscribe(topic, stream);
}

}  // namespace rivet
