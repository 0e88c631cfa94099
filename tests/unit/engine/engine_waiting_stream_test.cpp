// Streamed answers whose producer waits (engine/stream.hpp): a producer that says Waiting is
// not called again until its waker wakes it (from the loop or another thread); while it waits
// the loop serves others, no timeout but the drain ends it, the client's leaving closes it, and
// the drain ends it with its last chunk.
#include <gtest/gtest.h>

#include <atomic>
#include <memory>
#include <mutex>
#include <string>
#include <thread>

#include "engine_harness.hpp"

namespace rivet::engine::testing {
namespace {

// A ReplyView that streams from `producer` (the engine's own form).
ReplyView streamed(std::shared_ptr<StreamProducer> producer) {
    ReplyView v;
    v.head.status = 200;
    v.head.content_type = "text/plain";
    v.head.body_kind = http::ResponseHead::Body::Streamed;
    v.stream = std::move(producer);
    return v;
}

// What the producer and the test share: pieces handed over under a lock, the waker kept from
// the first call, and the count of calls.
struct Feed {
    std::mutex mu;
    std::string ready;
    bool done = false;
    StreamWaker waker;
    std::atomic<int> calls{0};

    std::shared_ptr<StreamProducer> producer(const std::shared_ptr<Feed>& self) {
        return std::make_shared<StreamProducer>([self](std::string& out, const StreamWaker& w) {
            ++self->calls;
            std::lock_guard lock(self->mu);
            self->waker = w;
            out.swap(self->ready);
            return self->done ? Produced::Done : Produced::Waiting;
        });
    }
    void push(std::string_view piece, bool last = false) {
        StreamWaker w;
        {
            std::lock_guard lock(mu);
            ready += piece;
            done = last;
            w = waker;
        }
        w.wake();
    }
    StreamWaker current_waker() {
        std::lock_guard lock(mu);
        return waker;
    }
    // The head may reach the client before the producer's first call: wait for that call.
    StreamWaker first_waker() {
        for (int i = 0; i < 1000; ++i) {
            if (StreamWaker w = current_waker(); w.link()) return w;
            std::this_thread::sleep_for(2ms);
        }
        return {};
    }
};

TEST(EngineWaitingStream, WaitingProducerIsNotCalledUntilWoken) {
    auto feed = std::make_shared<Feed>();
    feed->ready = "first";
    EngineHarness h({}, [&](Exchange& ex) {
        if (ex.head().path == "/stream") return ex.respond(streamed(feed->producer(feed)));
        ex.respond_simple(200, "other\n");
    });
    auto c = h.connect();
    c->send(get("/stream"));
    ASSERT_TRUE(c->read_until("first\r\n"));
    // Another connection of the same loop is served while the stream waits.
    auto other = h.connect();
    other->send(get("/other"));
    auto got = other->read_responses(1);
    ASSERT_EQ(got.size(), 1u);
    EXPECT_EQ(got[0].body, "other\n");
    c->read_for(200ms);
    ASSERT_TRUE(h.sync());
    EXPECT_EQ(feed->calls.load(), 1);  // called once, then never while it waited
    feed->push("second", true);
    auto done = c->read_responses(1);
    ASSERT_EQ(done.size(), 1u);
    EXPECT_EQ(done[0].body, "firstsecond");
    EXPECT_TRUE(done[0].raw.ends_with("\r\n0\r\n\r\n"));
    EXPECT_EQ(feed->calls.load(), 2);
}

TEST(EngineWaitingStream, WokenFromAnotherThread) {
    auto feed = std::make_shared<Feed>();
    EngineHarness h({}, [&](Exchange& ex) { ex.respond(streamed(feed->producer(feed))); });
    auto c = h.connect();
    c->send(get("/stream") + get("/after"));
    ASSERT_TRUE(c->read_until("\r\n\r\n"));  // the head: the producer ran once
    constexpr int kPieces = 50;
    std::thread worker([&] {
        for (int i = 0; i < kPieces; ++i)
            feed->push(std::string("p").append(std::to_string(i)).append(";"));
        feed->push("", true);
    });
    auto got = c->read_responses(2);
    worker.join();
    ASSERT_EQ(got.size(), 2u);
    std::string want;
    for (int i = 0; i < kPieces; ++i) want.append("p").append(std::to_string(i)).append(";");
    EXPECT_EQ(got[0].body, want);
    // No spinning: besides the first call, at most two per wake (the wake's own resume, and
    // one more when a wake lands while the producer is being called).
    EXPECT_LE(feed->calls.load(), 2 * (kPieces + 1) + 1);
    EXPECT_EQ(got[1].status, 200);  // the pipelined request waited for the stream's end
}

TEST(EngineWaitingStream, WakeFromInsideTheProducerIsNotLost) {
    auto calls = std::make_shared<int>(0);
    EngineHarness h({}, [&](Exchange& ex) {
        ex.respond(streamed(
            std::make_shared<StreamProducer>([calls](std::string& out, const StreamWaker& w) {
                if (++*calls == 1) {
                    out = "x";
                    w.wake();  // something arrived while it was answering
                    return Produced::Waiting;
                }
                out = "y";
                return Produced::Done;
            })));
    });
    auto c = h.connect();
    c->send(get("/stream"));
    auto got = c->read_responses(1);
    ASSERT_EQ(got.size(), 1u);
    EXPECT_EQ(got[0].body, "xy");
}

TEST(EngineWaitingStream, ClientLeavingClosesTheWaitingStream) {
    auto feed = std::make_shared<Feed>();
    std::weak_ptr<StreamProducer> held;
    EngineHarness h({}, [&](Exchange& ex) {
        auto p = feed->producer(feed);
        held = p;
        ex.respond(streamed(p));
    });
    auto c = h.connect();
    c->send(get("/stream"));
    ASSERT_TRUE(c->read_until("\r\n\r\n"));
    StreamWaker w = feed->first_waker();
    ASSERT_TRUE(w.link());
    EXPECT_FALSE(w.closed());
    c.reset();  // the client closes its socket
    for (int i = 0; i < 400 && !w.closed(); ++i) std::this_thread::sleep_for(5ms);
    EXPECT_TRUE(w.closed());
    ASSERT_TRUE(h.sync());
    EXPECT_TRUE(held.expired());  // the engine let go of the producer
    w.wake();                     // after the close: nothing happens
    ASSERT_TRUE(h.sync());
    EXPECT_EQ(feed->calls.load(), 1);
}

TEST(EngineWaitingStream, NoTimeoutEndsAWaitingStream) {
    ServerConfig config;
    config.timeouts.write_ms = 100;
    config.timeouts.idle_ms = 100;
    config.timeouts.body_ms = 100;
    auto feed = std::make_shared<Feed>();
    EngineHarness h(config, [&](Exchange& ex) { ex.respond(streamed(feed->producer(feed))); });
    auto c = h.connect();
    c->send(get("/stream"));
    ASSERT_TRUE(c->read_until("\r\n\r\n"));
    c->read_for(500ms);  // five times every timeout above
    EXPECT_FALSE(c->eof());
    feed->push("late", true);
    auto got = c->read_responses(1);
    ASSERT_EQ(got.size(), 1u);
    EXPECT_EQ(got[0].body, "late");
}

TEST(EngineWaitingStream, DrainEndsAWaitingStreamWithItsLastChunk) {
    ServerConfig config;
    config.timeouts.drain_ms = 30'000;
    auto feed = std::make_shared<Feed>();
    feed->ready = "open";
    EngineHarness h(config, [&](Exchange& ex) { ex.respond(streamed(feed->producer(feed))); });
    auto c = h.connect();
    c->send(get("/stream"));
    ASSERT_TRUE(c->read_until("open\r\n"));
    const auto start = std::chrono::steady_clock::now();
    h.io().begin_drain();
    ASSERT_TRUE(c->wait_eof(5000ms));  // far less than the drain timeout
    EXPECT_LT(std::chrono::steady_clock::now() - start, 5000ms);
    auto got = parse_responses(c->received());
    ASSERT_EQ(got.size(), 1u);
    EXPECT_EQ(got[0].body, "open");
    EXPECT_TRUE(got[0].raw.ends_with("\r\n0\r\n\r\n"));
    EXPECT_TRUE(feed->current_waker().closed());
}

TEST(EngineWaitingStream, DrainEndsAStreamThatWaitsBehindUnsentOutput) {
    // The client reads nothing at first: the stream's output waits in the socket when the
    // drain begins, and the stream ends once that output has left.
    ServerConfig config;
    config.timeouts.drain_ms = 30'000;
    auto feed = std::make_shared<Feed>();
    feed->ready = std::string(512 * 1024, 'z');
    EngineHarness h(config, [&](Exchange& ex) { ex.respond(streamed(feed->producer(feed))); });
    auto c = h.connect(16 * 1024);
    c->send(get("/stream"));
    ASSERT_TRUE(feed->first_waker().link());
    h.io().begin_drain();
    ASSERT_TRUE(h.sync());
    ASSERT_TRUE(c->wait_eof(5000ms));
    auto got = parse_responses(c->received());
    ASSERT_EQ(got.size(), 1u);
    EXPECT_EQ(got[0].body.size(), 512u * 1024);
    EXPECT_TRUE(got[0].raw.ends_with("\r\n0\r\n\r\n"));
}

TEST(EngineWaitingStream, AbortClosesTheConnectionAtOnce) {
    auto feed = std::make_shared<Feed>();
    EngineHarness h({}, [&](Exchange& ex) { ex.respond(streamed(feed->producer(feed))); });
    auto c = h.connect();
    c->send(get("/stream"));
    ASSERT_TRUE(c->read_until("\r\n\r\n"));
    StreamWaker w = feed->first_waker();
    ASSERT_TRUE(w.link());
    std::thread([w] { w.abort(); }).join();
    ASSERT_TRUE(c->wait_eof(2000ms));
    EXPECT_FALSE(c->received().ends_with("0\r\n\r\n"));  // cut short, not ended
}

TEST(EngineWaitingStream, HeadRequestNeverCallsTheProducer) {
    auto feed = std::make_shared<Feed>();
    EngineHarness h({}, [&](Exchange& ex) { ex.respond(streamed(feed->producer(feed))); });
    auto c = h.connect();
    c->send(request("HEAD", "/stream") + get("/x", "Connection: close\r\n"));
    feed->push("", true);  // the GET's stream ends at once
    ASSERT_TRUE(c->wait_eof());
    auto got = parse_responses(c->received(), {true, false});
    ASSERT_EQ(got.size(), 2u);
    EXPECT_EQ(got[0].body, "");
    EXPECT_EQ(feed->calls.load(), 1);  // the GET's only
}

TEST(EngineWaitingStream, Http10StreamEndsAtTheClose) {
    auto feed = std::make_shared<Feed>();
    EngineHarness h({}, [&](Exchange& ex) { ex.respond(streamed(feed->producer(feed))); });
    auto c = h.connect();
    c->send("GET /s HTTP/1.0\r\nConnection: keep-alive\r\n\r\n");
    ASSERT_TRUE(c->read_until("\r\n\r\n"));
    feed->push("one ");
    ASSERT_TRUE(c->read_until("one "));
    feed->push("two", true);
    ASSERT_TRUE(c->wait_eof());
    auto got = parse_responses(c->received(), {}, true);
    ASSERT_EQ(got.size(), 1u);
    EXPECT_FALSE(got[0].chunked);
    EXPECT_EQ(got[0].body, "one two");
}

}  // namespace
}  // namespace rivet::engine::testing
