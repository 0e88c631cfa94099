// The public WebSocket and WebSocketHandle over the engine's WebSocketSession, and the engine
// handler that calls the route's behavior.
#include <algorithm>

#include "app/operations/operations.hpp"
#include "app/websocket/topics.hpp"
#include "app/websocket/websocket_core.hpp"
#include "engine/io_thread.hpp"

namespace rivet {

using detail::WebSocketCore;
using http::ws::Opcode;

namespace {

Opcode opcode_of(MessageKind kind) {
    return kind == MessageKind::Binary ? Opcode::Binary : Opcode::Text;
}

SendStatus status_of(engine::WebSocketSession::SendResult r) {
    using R = engine::WebSocketSession::SendResult;
    return r == R::Sent           ? SendStatus::Sent
           : r == R::Backpressure ? SendStatus::Backpressure
                                  : SendStatus::Dropped;
}

// The engine's side of one connection: calls the route's behavior with the public facade.
class CoreHandler final : public engine::WebSocketHandler {
public:
    explicit CoreHandler(std::shared_ptr<WebSocketCore> core) : core_(std::move(core)) {}

    void on_open(engine::WebSocketSession& session) override {
        core_->session = &session;
        core_->opened_ns = app::Operations::now_ns();
        if (auto& fn = core_->route.behavior.on_open) guarded([&](WebSocket& ws) { fn(ws); });
    }
    void on_message(engine::WebSocketSession&, Opcode opcode, std::string_view payload) override {
        auto kind = opcode == Opcode::Binary ? MessageKind::Binary : MessageKind::Text;
        if (auto& fn = core_->route.behavior.on_message)
            guarded([&](WebSocket& ws) { fn(ws, payload, kind); });
    }
    void on_drain(engine::WebSocketSession&) override {
        if (auto& fn = core_->route.behavior.on_drain) guarded([&](WebSocket& ws) { fn(ws); });
    }
    void on_close(engine::WebSocketSession& session, uint16_t code,
                  std::string_view reason) override {
        WebSocketCore& c = *core_;
        c.closed.store(true, std::memory_order_release);
        for (auto& topic : c.topics) c.route.topics->unsubscribe(c.thread->index(), topic, &c);
        c.topics.clear();
        if (auto& fn = c.route.behavior.on_close) {
            WebSocket ws = c.facade();
            try {
                fn(ws, code, reason);
            } catch (...) {  // the connection is gone: nothing to fail any more
            }
        }
        if (c.route.ops) {
            const auto& n = session.counters();
            app::WebSocketSummary summary{n.messages_in, n.messages_out, n.bytes_in, n.bytes_out,
                                          code};
            c.route.ops->websocket_closed(c.thread->index(), c.client, c.path,
                                          (app::Operations::now_ns() - c.opened_ns) / 1000,
                                          summary);
        }
        c.session = nullptr;
    }

private:
    // A callback that throws fails its connection (1011), never the loop.
    template <typename Fn>
    void guarded(Fn&& fn) {
        WebSocket ws = core_->facade();
        try {
            fn(ws);
        } catch (const std::exception& e) {
            if (core_->route.ops)
                core_->route.ops->handler_threw(core_->thread->index(), core_->path, e.what());
            if (core_->session) core_->session->close(ws_close::kInternalError, "internal error");
        } catch (...) {
            if (core_->route.ops)
                core_->route.ops->handler_threw(core_->thread->index(), core_->path, nullptr);
            if (core_->session) core_->session->close(ws_close::kInternalError, "internal error");
        }
    }

    std::shared_ptr<WebSocketCore> core_;
};

}  // namespace

WebSocketCore::WebSocketCore(app::WebSocketRoute& r, const Request& req)
    : route(r), path(req.path()) {
    net::parse_ip(req.peer_address(), client);
}

engine::SessionFactory WebSocketCore::factory(std::shared_ptr<WebSocketCore> core,
                                              std::optional<http::ws::DeflateParams> deflate) {
    return [core = std::move(core), deflate](engine::Connection& conn) {
        core->thread = &conn.owner();
        return std::make_unique<engine::WebSocketSession>(conn, core->route.config, deflate,
                                                          std::make_unique<CoreHandler>(core));
    };
}

SendStatus WebSocket::send(std::string_view message, MessageKind kind) {
    if (!core_.session) return SendStatus::Dropped;
    return status_of(core_.session->send(opcode_of(kind), message));
}

void WebSocket::close(uint16_t code, std::string_view reason) {
    if (core_.session) core_.session->close(code, reason);
}

size_t WebSocket::buffered() const {
    return core_.session ? core_.session->buffered() : 0;
}

bool WebSocket::open() const {
    return core_.session && core_.session->state() == engine::WebSocketSession::State::Open;
}

void WebSocket::subscribe(std::string_view topic) {
    if (!core_.session) return;
    if (std::find(core_.topics.begin(), core_.topics.end(), topic) != core_.topics.end()) return;
    core_.topics.emplace_back(topic);
    core_.route.topics->subscribe(core_.thread->index(), topic, &core_);
}

void WebSocket::unsubscribe(std::string_view topic) {
    auto it = std::find(core_.topics.begin(), core_.topics.end(), topic);
    if (it == core_.topics.end()) return;
    core_.route.topics->unsubscribe(core_.thread->index(), topic, &core_);
    core_.topics.erase(it);
}

const std::string& WebSocket::path() const {
    return core_.path;
}
const std::string& WebSocket::subprotocol() const {
    return core_.subprotocol;
}
std::string WebSocket::remote_address() const {
    return net::to_string(core_.client);
}
unsigned WebSocket::loop_index() const {
    return core_.thread->index();
}
std::any& WebSocket::data() {
    return core_.data;
}

WebSocketHandle WebSocket::handle() const {
    return WebSocketHandle(core_.shared_from_this());
}

bool WebSocketHandle::send(std::string message, MessageKind kind) const {
    if (!core_ || core_->closed.load(std::memory_order_acquire)) return false;
    auto& loop = core_->thread->loop();
    if (loop.on_loop_thread()) {
        if (!core_->session) return false;
        return core_->session->send(opcode_of(kind), message) !=
               engine::WebSocketSession::SendResult::Dropped;
    }
    loop.post([core = core_, message = std::move(message), kind] {
        if (core->session) core->session->send(opcode_of(kind), message);
    });
    return true;
}

void WebSocketHandle::close(uint16_t code, std::string reason) const {
    if (!core_ || core_->closed.load(std::memory_order_acquire)) return;
    auto& loop = core_->thread->loop();
    if (loop.on_loop_thread()) {
        if (core_->session) core_->session->close(code, reason);
        return;
    }
    loop.post([core = core_, code, reason = std::move(reason)] {
        if (core->session) core->session->close(code, reason);
    });
}

bool WebSocketHandle::open() const {
    return core_ && !core_->closed.load(std::memory_order_acquire);
}

}  // namespace rivet
