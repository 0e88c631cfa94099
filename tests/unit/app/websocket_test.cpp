// App::ws on real sockets: the handshake through middleware and routing, echo, the close
// handshake and its codes, limits, handles and publish from other threads, backpressure and the
// slow reader's bound, and the drain's 1001.
#include <rivet/rivet.hpp>

#include <gtest/gtest.h>

#include <atomic>
#include <condition_variable>
#include <mutex>
#include <thread>
#include <vector>

#include "raw_client.hpp"
#include "ws_client.hpp"

namespace {

using rivet::MessageKind;
using rivet::WebSocket;
using rivet::WebSocketBehavior;
using rivet::test::WsClient;
using Opcode = rivet::http::ws::Opcode;

// Waits for a condition set by another thread (the loop's), without timing anything.
struct Signal {
    std::mutex m;
    std::condition_variable cv;
    int count = 0;
    std::vector<uint16_t> codes;
    std::string text;
    void bump(uint16_t code = 0, std::string_view t = {}) {
        std::lock_guard l(m);
        ++count;
        if (code) codes.push_back(code);
        if (!t.empty()) text.assign(t);
        cv.notify_all();
    }
    bool wait_for(int n) {
        std::unique_lock l(m);
        return cv.wait_for(l, std::chrono::seconds(30), [&] { return count >= n; });
    }
};

class WebSocketTest : public ::testing::Test {
protected:
    void start(unsigned threads = 1) {
        rivet::RunOptions o;
        o.host = "127.0.0.1";
        o.port = 0;
        o.threads = threads;
        o.workers = 1;
        o.quiet = true;
        o.ops.admin.metrics = true;
        port_ = app_.start(o);
    }
    void TearDown() override { app_.stop(); }
    WebSocketBehavior echo() {
        WebSocketBehavior b;
        b.on_message = [](WebSocket& ws, std::string_view m, MessageKind k) { ws.send(m, k); };
        return b;
    }
    // What the loop's callbacks tell the test: members, so that a connection closed as a test
    // ends (its client goes out of scope) still finds them until TearDown stops the app.
    Signal signals_[3];
    rivet::App app_;
    uint16_t port_ = 0;
};

TEST_F(WebSocketTest, EchoesTextAndBinary) {
    app_.ws("/echo", echo());
    start();
    WsClient c(port_, "/echo");
    ASSERT_TRUE(c.upgraded()) << c.response_head();
    EXPECT_NE(c.response_head().find("Sec-WebSocket-Accept: s3pPLMBiTxaQ9kYGzzhZRbK+xOo=\r\n"),
              std::string::npos);
    c.send_text("hello");
    auto f = c.read_message();
    ASSERT_TRUE(f);
    EXPECT_EQ(f->opcode, Opcode::Text);
    EXPECT_EQ(f->payload, "hello");
    std::string big(1 << 20, '\x01');
    c.send(Opcode::Binary, big);
    f = c.read_message();
    ASSERT_TRUE(f);
    EXPECT_EQ(f->opcode, Opcode::Binary);
    EXPECT_EQ(f->payload, big);
}

TEST_F(WebSocketTest, HandshakeRefusals) {
    app_.ws("/echo", echo());
    start();
    WsClient v12(port_, "/echo", "Sec-WebSocket-Version: 12\r\n");
    EXPECT_EQ(v12.response_head().rfind("HTTP/1.1 426 Upgrade Required", 0), 0u);
    EXPECT_NE(v12.response_head().find("Sec-WebSocket-Version: 13\r\n"), std::string::npos);
    auto plain = rivet::test::exchange(port_, "GET /echo HTTP/1.1\r\nHost: x\r\n\r\n");
    EXPECT_EQ(plain.rfind("HTTP/1.1 426 ", 0), 0u) << plain;
    EXPECT_NE(plain.find("Upgrade: websocket\r\n"), std::string::npos);
    auto bad_key = rivet::test::exchange(
        port_,
        "GET /echo HTTP/1.1\r\nHost: x\r\nUpgrade: websocket\r\nConnection: Upgrade\r\n"
        "Sec-WebSocket-Version: 13\r\nSec-WebSocket-Key: short\r\n\r\n");
    EXPECT_EQ(bad_key.rfind("HTTP/1.1 400 ", 0), 0u) << bad_key;
    auto post =
        rivet::test::exchange(port_, "POST /echo HTTP/1.1\r\nHost: x\r\nContent-Length: 0\r\n\r\n");
    EXPECT_EQ(post.rfind("HTTP/1.1 405 ", 0), 0u) << post;
}

// Auth refuses the upgrade before the 101: a middleware, and on_upgrade.
class NeedsToken final : public rivet::Middleware {
public:
    bool before(rivet::Request& req, rivet::Response& res) override {
        if (req.header("Authorization") == "Bearer ok") return true;
        res.status(401).text("no");
        return false;
    }
};

TEST_F(WebSocketTest, MiddlewareAndOnUpgradeRefuseBeforeThe101) {
    app_.use("/private", std::make_shared<NeedsToken>());
    auto b = echo();
    b.on_upgrade = [](rivet::WebSocketUpgrade& u) {
        if (u.request().query("room") == "closed") throw rivet::HttpError(403, "room closed");
        u.data = std::string(u.request().query("room").value_or("lobby"));
    };
    b.on_open = [](WebSocket& ws) { ws.send("room " + std::any_cast<std::string>(ws.data())); };
    app_.ws("/private", b);
    start();
    WsClient no_token(port_, "/private");
    EXPECT_EQ(no_token.response_head().rfind("HTTP/1.1 401 ", 0), 0u);
    WsClient closed(port_, "/private?room=closed", "Authorization: Bearer ok\r\n");
    EXPECT_EQ(closed.response_head().rfind("HTTP/1.1 403 ", 0), 0u);
    WsClient ok(port_, "/private?room=blue", "Authorization: Bearer ok\r\n");
    ASSERT_TRUE(ok.upgraded()) << ok.response_head();
    auto f = ok.read_message();
    ASSERT_TRUE(f);
    EXPECT_EQ(f->payload, "room blue");
}

TEST_F(WebSocketTest, SubprotocolAndOrigins) {
    auto b = echo();
    b.options.subprotocols = {"chat.v2", "chat.v1"};
    b.options.allowed_origins = {"https://good.example"};
    app_.ws("/p", b);
    start();
    WsClient c(port_, "/p", "Sec-WebSocket-Protocol: chat.v1, chat.v2\r\n");
    ASSERT_TRUE(c.upgraded());
    EXPECT_NE(c.response_head().find("Sec-WebSocket-Protocol: chat.v2\r\n"), std::string::npos);
    WsClient none(port_, "/p", "Sec-WebSocket-Protocol: other\r\n");
    ASSERT_TRUE(none.upgraded());
    EXPECT_EQ(none.response_head().find("Sec-WebSocket-Protocol"), std::string::npos);
    WsClient evil(port_, "/p", "Origin: https://evil.example\r\n");
    EXPECT_EQ(evil.response_head().rfind("HTTP/1.1 403 ", 0), 0u);
    WsClient good(port_, "/p", "Origin: https://good.example\r\n");
    EXPECT_TRUE(good.upgraded());
}

TEST_F(WebSocketTest, CloseHandshakeEchoesTheCodeAndTellsOnClose) {
    Signal& closed = signals_[0];
    auto b = echo();
    b.on_close = [&](WebSocket&, uint16_t code, std::string_view reason) {
        closed.bump(code, reason);
    };
    app_.ws("/echo", b);
    start();
    WsClient c(port_, "/echo");
    ASSERT_TRUE(c.upgraded());
    c.send_close(4000, "bye");
    auto f = c.read();
    ASSERT_TRUE(f);
    EXPECT_EQ(f->opcode, Opcode::Close);
    EXPECT_EQ(f->close_code(), 4000);
    EXPECT_TRUE(c.wait_eof());  // the server ends TCP first (RFC 6455 §7.1.1)
    ASSERT_TRUE(closed.wait_for(1));
    EXPECT_EQ(closed.codes.at(0), 4000);
    EXPECT_EQ(closed.text, "bye");
}

TEST_F(WebSocketTest, LimitsAndViolationsCloseWithTheirCodes) {
    auto b = echo();
    b.options.max_message = 1000;
    app_.ws("/echo", b);
    start();
    struct Case {
        const char* what;
        std::function<void(WsClient&)> send;
        uint16_t code;
    } cases[] = {
        {"too big", [](WsClient& c) { c.send_text(std::string(1001, 'a')); }, 1009},
        {"bad utf-8", [](WsClient& c) { c.send_text("\xc3\x28"); }, 1007},
        {"reserved opcode", [](WsClient& c) { c.send(Opcode(3), "x"); }, 1002},
        {"unmasked", [](WsClient& c) { c.send_raw(std::string("\x81\x01x", 3)); }, 1002},
        {"fragmented too big",
         [](WsClient& c) {
             c.send(Opcode::Text, std::string(600, 'a'), false);
             c.send(Opcode::Continuation, std::string(600, 'a'));
         },
         1009},
    };
    for (auto& k : cases) {
        WsClient c(port_, "/echo");
        ASSERT_TRUE(c.upgraded());
        k.send(c);
        auto f = c.read_message();
        ASSERT_TRUE(f) << k.what;
        EXPECT_EQ(f->opcode, Opcode::Close) << k.what;
        EXPECT_EQ(f->close_code(), k.code) << k.what;
        EXPECT_TRUE(c.wait_eof()) << k.what;
    }
    // The loop still serves.
    WsClient c(port_, "/echo");
    c.send_text("still here");
    auto f = c.read_message();
    ASSERT_TRUE(f);
    EXPECT_EQ(f->payload, "still here");
}

TEST_F(WebSocketTest, PingIsAnsweredWithItsPayload) {
    app_.ws("/echo", echo());
    start();
    WsClient c(port_, "/echo");
    c.send(Opcode::Ping, "are you there");
    auto f = c.read();
    ASSERT_TRUE(f);
    EXPECT_EQ(f->opcode, Opcode::Pong);
    EXPECT_EQ(f->payload, "are you there");
}

TEST_F(WebSocketTest, HandlesSendFromAnotherThread) {
    std::mutex m;
    std::vector<rivet::WebSocketHandle> handles;
    Signal& opened = signals_[0];
    auto b = echo();
    b.on_open = [&](WebSocket& ws) {
        {
            std::lock_guard l(m);
            handles.push_back(ws.handle());
        }
        opened.bump();
    };
    app_.ws("/h", b);
    start(2);
    WsClient c(port_, "/h");
    ASSERT_TRUE(opened.wait_for(1));
    rivet::WebSocketHandle h;
    {
        std::lock_guard l(m);
        h = handles.at(0);
    }
    std::thread([h] {
        for (int i = 0; i < 100; ++i) h.send(std::string("n").append(std::to_string(i)));
    }).join();
    for (int i = 0; i < 100; ++i) {
        auto f = c.read_message();
        ASSERT_TRUE(f);
        EXPECT_EQ(f->payload, "n" + std::to_string(i));  // in order
    }
    c.send_close(1000);
    EXPECT_TRUE(c.wait_eof());
    for (int i = 0; i < 3000 && h.open(); ++i)
        std::this_thread::sleep_for(std::chrono::milliseconds(10));
    EXPECT_FALSE(h.open());
    EXPECT_FALSE(h.send("too late"));
}

TEST_F(WebSocketTest, PublishFromAWorkerReachesSubscribersOnEveryLoop) {
    Signal& subscribed = signals_[0];
    WebSocketBehavior b;
    b.on_open = [&](WebSocket& ws) {
        ws.subscribe("news");
        subscribed.bump();
    };
    app_.ws("/sub", b);
    start(2);
    constexpr int kClients = 200;
    std::vector<std::unique_ptr<WsClient>> clients;
    for (int i = 0; i < kClients; ++i) clients.push_back(std::make_unique<WsClient>(port_, "/sub"));
    ASSERT_TRUE(subscribed.wait_for(kClients));
    std::thread([this] {
        app_.publish("news", "first");
        app_.publish("other", "nobody");
        app_.publish("news", std::string(5000, 'z'));
    }).join();
    for (auto& c : clients) {
        auto f = c->read_message();
        ASSERT_TRUE(f);
        EXPECT_EQ(f->payload, "first");
        f = c->read_message();
        ASSERT_TRUE(f);
        EXPECT_EQ(f->payload, std::string(5000, 'z'));
    }
}

// A client that never reads: sends pile up past the high-water mark (Backpressure), then past
// the limit, where the server cuts it off and counts it; another client is served meanwhile.
TEST_F(WebSocketTest, SlowReaderIsClosedAtTheSendLimit) {
    Signal& backpressure = signals_[0];
    Signal& closed = signals_[1];
    auto b = echo();
    b.options.send_high_water = 64 * 1024;
    b.options.send_limit = 1 << 20;
    b.on_message = [&](WebSocket& ws, std::string_view m, MessageKind k) {
        if (m != "flood") return (void)ws.send(m, k);
        std::string chunk(64 * 1024, 'f');
        for (int i = 0; i < 64; ++i)
            if (ws.send(chunk) == rivet::SendStatus::Backpressure && i < 63) {
                backpressure.bump();
                i = 63 - 1;  // one more send past the mark, then stop
            }
        // Keep sending on a timer until the connection is cut off; each timer holds the next.
        auto again = std::make_shared<std::function<void()>>();
        *again = [h = ws.handle(), loop = rivet::EventLoop::current(),
                  next = std::weak_ptr<std::function<void()>>(again), chunk] {
            if (!h.open()) return;
            h.send(chunk);
            if (auto fn = next.lock())
                loop->call_after(std::chrono::milliseconds(1), [fn] { (*fn)(); });
        };
        (*again)();
    };
    b.on_close = [&](WebSocket&, uint16_t code, std::string_view) { closed.bump(code); };
    app_.ws("/echo", b);
    start();
    WsClient slow(port_, "/echo", "", 4096);
    slow.send_text("flood");
    ASSERT_TRUE(backpressure.wait_for(1));
    ASSERT_TRUE(closed.wait_for(1));
    EXPECT_EQ(closed.codes.at(0), 1008);
    WsClient other(port_, "/echo");
    other.send_text("fine");
    auto f = other.read_message();
    ASSERT_TRUE(f);
    EXPECT_EQ(f->payload, "fine");
    auto metrics = rivet::test::exchange(port_, "GET /metrics HTTP/1.1\r\nHost: x\r\n\r\n");
    EXPECT_NE(metrics.find("rivet_websocket_slow_closed_total 1\n"), std::string::npos) << metrics;
}

TEST_F(WebSocketTest, DrainEventAfterBackpressure) {
    Signal& drained = signals_[0];
    auto b = echo();
    b.options.send_high_water = 64 * 1024;
    b.on_message = [](WebSocket& ws, std::string_view, MessageKind) {
        ws.send(std::string(4 << 20, 'd'));  // far past what the socket takes at once
    };
    b.on_drain = [&](WebSocket& ws) {
        drained.bump();
        ws.send("after drain");
    };
    app_.ws("/echo", b);
    start();
    WsClient c(port_, "/echo");
    c.send_text("go");
    auto f = c.read_message();
    ASSERT_TRUE(f);
    EXPECT_EQ(f->payload.size(), size_t(4 << 20));
    ASSERT_TRUE(drained.wait_for(1));
    f = c.read_message();
    ASSERT_TRUE(f);
    EXPECT_EQ(f->payload, "after drain");
}

TEST_F(WebSocketTest, StopClosesWithGoingAway) {
    app_.ws("/echo", echo());
    start();
    WsClient c(port_, "/echo");
    c.send_text("x");
    ASSERT_TRUE(c.read_message());
    std::thread stopper([this] { app_.stop(); });
    auto f = c.read_message();
    ASSERT_TRUE(f);
    EXPECT_EQ(f->opcode, Opcode::Close);
    EXPECT_EQ(f->close_code(), 1001);
    c.send_close(1001);
    stopper.join();
}

}  // namespace
