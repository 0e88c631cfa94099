// rivet::EventStream (Server-Sent Events) and rivet::ShutdownSignal on a real App: the event
// format, sends from another thread, backpressure and the slow client's close, on_close,
// Last-Event-ID, heartbeats, the metrics, and the shutdown hook (callbacks and co_await).
#include <gtest/gtest.h>

#include <atomic>
#include <memory>
#include <mutex>

#include "coroutine_test_support.hpp"

namespace rivet::testing {
namespace {

// The body of a chunked response (what arrived of it).
std::string dechunk(const std::string& raw) {
    std::string out;
    size_t pos = raw.find("\r\n\r\n");
    if (pos == std::string::npos) return out;
    pos += 4;
    for (;;) {
        size_t eol = raw.find("\r\n", pos);
        if (eol == std::string::npos) return out;
        size_t size = std::stoul(raw.substr(pos, eol - pos), nullptr, 16);
        if (size == 0 || raw.size() < eol + 2 + size) return out;
        out.append(raw, eol + 2, size);
        pos = eol + 2 + size + 2;
    }
}

// Reads until `needle` is in the de-chunked body, EOF, or 5 s.
bool read_until(RawClient& c, const std::string& needle) {
    return eventually(
        [&] {
            if (dechunk(c.received()).find(needle) != std::string::npos) return true;
            c.read_some();
            return dechunk(c.received()).find(needle) != std::string::npos;
        },
        5s);
}

// A handle the test keeps, filled by the handler on the loop.
struct Slot {
    std::mutex mu;
    EventStream events;
    void put(const EventStream& e) {
        std::lock_guard lock(mu);
        events = e;
    }
    EventStream get() {
        std::lock_guard lock(mu);
        return events;
    }
};

using EventStreamTest = WaitingAppTest;

TEST_F(EventStreamTest, EventsAreFormattedAndTheFieldsSet) {
    app_.get("/events", [](Request& req, Response& res) {
        EventStream events = event_stream(req, res);
        events.send(ServerEvent{"line1\nline2\r\nline3\rline4", "update", "7"});
        events.send("plain");
        events.send("named", "x", "id\nwith break");
        events.comment("two\nlines");
        events.close();
        EXPECT_FALSE(events.open());
        EXPECT_FALSE(events.send("after close"));
    });
    start();
    RawClient c(port_);
    c.send("GET /events HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n");
    ASSERT_TRUE(c.wait_eof());
    const std::string& raw = c.received();
    EXPECT_NE(raw.find("Content-Type: text/event-stream\r\n"), std::string::npos) << raw;
    EXPECT_NE(raw.find("Cache-Control: no-cache\r\n"), std::string::npos);
    EXPECT_NE(raw.find("X-Accel-Buffering: no\r\n"), std::string::npos);
    EXPECT_TRUE(raw.ends_with("\r\n0\r\n\r\n"));
    EXPECT_EQ(dechunk(raw),
              "id: 7\nevent: update\ndata: line1\ndata: line2\ndata: line3\ndata: line4\n\n"
              "data: plain\n\n"
              "id: idwith break\nevent: named\ndata: x\n\n"
              ": two\n: lines\n");
}

TEST_F(EventStreamTest, SentFromAnotherThreadThenClosed) {
    auto slot = std::make_shared<Slot>();
    app_.get("/events", [slot](Request& req, Response& res) { slot->put(event_stream(req, res)); });
    start();
    RawClient c(port_);
    c.get("/events");
    ASSERT_TRUE(eventually([&] { return slot->get().open(); }));
    std::thread([slot] {
        for (int i = 1; i <= 20; ++i)
            slot->get().send("tick", std::to_string(i), std::to_string(i));
    }).join();
    ASSERT_TRUE(read_until(c, "id: 20\nevent: tick\ndata: 20\n\n"));
    EXPECT_NE(metrics().find("\nrivet_event_streams_open 1\n"), std::string::npos);
    std::atomic<int> closed{0};
    slot->get().on_close([&] { ++closed; });
    slot->get().close();
    ASSERT_TRUE(
        eventually([&] { return c.read_some() && c.received().ends_with("\r\n0\r\n\r\n"); }));
    ASSERT_TRUE(eventually([&] { return closed.load() == 1; }));
    const std::string m = metrics();
    EXPECT_NE(m.find("\nrivet_event_streams_open 0\n"), std::string::npos) << m;
    EXPECT_NE(m.find("\nrivet_events_sent_total 20\n"), std::string::npos) << m;
    // The connection goes on: the next request on it is answered.
    c.get("/metrics");
    ASSERT_TRUE(eventually([&] {
        c.read_some();
        return c.received().find("rivet_event_streams_total") != std::string::npos;
    }));
}

TEST_F(EventStreamTest, BackpressureThenTheHardBoundClosesTheSlowStream) {
    app_.get("/events", [](Request& req, Response& res) {
        EventStreamOptions o;
        o.max_queued_bytes = 100;
        o.max_queued_bytes_hard = 400;
        o.heartbeat = 0ms;
        EventStream events = event_stream(req, res, o);
        const std::string data(50, 'd');  // 58 bytes as an event
        EXPECT_TRUE(events.send(data));   // 58: within
        EXPECT_FALSE(events.send(data));  // 116: queued, past the soft bound
        EXPECT_TRUE(events.open());
        EXPECT_EQ(events.queued_bytes(), 116u);
        for (int i = 0; i < 4; ++i) events.send(data);  // up to 348
        EXPECT_TRUE(events.open());
        EXPECT_FALSE(events.send(data));  // 406 > 400: the client is let go
        EXPECT_FALSE(events.open());
        EXPECT_EQ(events.queued_bytes(), 0u);
    });
    start();
    RawClient c(port_);
    c.get("/events");
    ASSERT_TRUE(c.wait_eof());
    ASSERT_TRUE(eventually([&] {
        return metrics().find("\nrivet_event_streams_slow_closed_total 1\n") != std::string::npos;
    }));
}

TEST_F(EventStreamTest, ClientLeavingEndsTheStream) {
    auto slot = std::make_shared<Slot>();
    std::atomic<int> closed{0};
    app_.get("/events", [slot, &closed](Request& req, Response& res) {
        EventStream events = event_stream(req, res);
        events.on_close([&closed] { ++closed; });
        slot->put(events);
    });
    start();
    auto c = std::make_unique<RawClient>(port_);
    c->get("/events");
    ASSERT_TRUE(eventually([&] { return slot->get().open(); }));
    c->close();
    ASSERT_TRUE(eventually([&] { return closed.load() == 1; }));
    EXPECT_FALSE(slot->get().open());
    EXPECT_FALSE(slot->get().send("nobody"));
    int again = 0;
    slot->get().on_close([&] { ++again; });  // ended already: runs at once
    EXPECT_EQ(again, 1);
}

TEST_F(EventStreamTest, LastEventIdAndHeartbeat) {
    app_.get("/events", [](Request& req, Response& res) {
        EventStreamOptions o;
        o.heartbeat = 30ms;
        o.retry = 1500ms;
        EventStream events = event_stream(req, res, o);
        events.send("resumed", events.last_event_id());
    });
    start();
    RawClient c(port_);
    c.send("GET /events HTTP/1.1\r\nHost: x\r\nLast-Event-ID: 41\r\n\r\n");
    ASSERT_TRUE(read_until(c, "retry: 1500\n\nevent: resumed\ndata: 41\n\n:\n\n"));
}

TEST_F(EventStreamTest, NotCompressedEvenWhenTheClientAcceptsIt) {
    app_.use(compression());
    app_.get("/events", [](Request& req, Response& res) {
        EventStream events = event_stream(req, res);
        events.send(std::string(4096, 'a'));
        events.close();
    });
    start();
    RawClient c(port_);
    c.send(
        "GET /events HTTP/1.1\r\nHost: x\r\nAccept-Encoding: gzip, br\r\nConnection: "
        "close\r\n\r\n");
    ASSERT_TRUE(c.wait_eof());
    EXPECT_EQ(c.received().find("Content-Encoding"), std::string::npos) << c.received();
    EXPECT_EQ(dechunk(c.received()), "data: " + std::string(4096, 'a') + "\n\n");
}

TEST_F(EventStreamTest, ShutdownSignalRunsCallbacksAndResumesWaiters) {
    ShutdownSignal stopping = app_.shutdown_signal();
    std::atomic<int> ran{0};
    app_.on_shutdown([&] { ++ran; });
    app_.get("/poll", [stopping](Request&, Response& res) -> Task<> {
        co_await stopping.wait();
        res.text(stopping.stopping() ? "stopping" : "not yet");
    });
    start();
    RawClient c(port_);
    c.get("/poll");
    RawClient probe(port_);  // the poll is waiting: another request is answered meanwhile
    probe.get("/metrics");
    ASSERT_NE(probe.read_responses(1).find("200 OK"), std::string::npos);
    EXPECT_FALSE(stopping.stopping());
    EXPECT_EQ(ran.load(), 0);
    app_.begin_lame_duck();
    EXPECT_TRUE(stopping.stopping());
    EXPECT_EQ(ran.load(), 1);
    EXPECT_EQ(body_of(c.read_responses(1)), "stopping");
    int late = 0;
    EXPECT_EQ(stopping.subscribe([&] { ++late; }), 0u);  // fired already: at once
    EXPECT_EQ(late, 1);
    app_.stop();  // fires nothing twice
    EXPECT_EQ(ran.load(), 1);
}

TEST(ShutdownSignal, UnsubscribedCallbackDoesNotRun) {
    ShutdownSignal s;
    int a = 0, b = 0;
    uint64_t id = s.subscribe([&] { ++a; });
    s.subscribe([&] { ++b; });
    s.unsubscribe(id);
    s.trigger();
    s.trigger();
    EXPECT_EQ(a, 0);
    EXPECT_EQ(b, 1);
}

}  // namespace
}  // namespace rivet::testing
