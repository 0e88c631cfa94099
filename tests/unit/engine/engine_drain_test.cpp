// Graceful stop (IoThread::begin_drain): idle connections close at once, answers in flight are
// still sent (with "Connection: close"), and nothing waits past the drain timeout. The lame duck
// before it (IoThread::begin_lame_duck): everything served, every connection ends after its next
// answer.
#include <gtest/gtest.h>

#include <future>
#include <string>

#include "engine_harness.hpp"

namespace rivet::engine::testing {
namespace {

TEST(EngineDrain, IdleKeepAliveConnectionClosesAtOnce) {
    EngineHarness h;
    auto c = h.connect();
    c->send(get("/1"));
    ASSERT_EQ(c->read_responses(1).size(), 1u);
    c->clear();
    h.io().begin_drain();
    EXPECT_TRUE(c->wait_eof(1000ms));
    EXPECT_EQ(c->received(), "");
}

TEST(EngineDrain, AnswerInFlightIsSentWithConnectionCloseThenEof) {
    EngineHarness h({}, [&](Exchange& ex) { h.app().keep(ex.defer()); });
    auto c = h.connect();
    c->send(get("/slow"));
    auto deferred = h.app().take_deferred(1);
    ASSERT_EQ(deferred.size(), 1u);
    h.io().begin_drain();
    ASSERT_TRUE(h.sync());
    EXPECT_EQ(c->read_for(100ms), "");  // still open: an answer is owed
    EXPECT_FALSE(c->eof());
    deferred[0].complete(rivet::app::reply_of(reply("last")));
    auto got = c->read_responses(1);
    ASSERT_EQ(got.size(), 1u);
    EXPECT_EQ(got[0].body, "last");
    EXPECT_EQ(got[0].field("Connection"), "close");
    EXPECT_TRUE(c->wait_eof(1000ms));
}

TEST(EngineDrain, RequestArrivingDuringTheDrainIsAnsweredWithClose) {
    EngineHarness h;
    auto c = h.connect();
    c->send(get("/1"));
    ASSERT_EQ(c->read_responses(1).size(), 1u);
    auto fresh = h.connect();  // never served yet: the drain lets it ask once
    h.io().begin_drain();
    ASSERT_TRUE(h.sync());  // the drain has begun before the request arrives
    fresh->send(get("/late"));
    auto got = fresh->read_responses(1);
    ASSERT_EQ(got.size(), 1u);
    EXPECT_EQ(got[0].body, "GET /late body=");
    EXPECT_EQ(got[0].field("Connection"), "close");
    EXPECT_TRUE(fresh->wait_eof(1000ms));
}

// A loop held busy by a handler that blocks on /block (on connection b) until release(), with
// connection a kept alive after one answered request: what a sends meanwhile waits unread in
// its socket while the drain is posted.
struct BusyLoop {
    std::promise<void> gate;
    std::shared_future<void> released = gate.get_future().share();
    EngineHarness h{{}, [this](Exchange& ex) {
                        if (ex.head().target == "/block") released.wait();
                        ex.respond(rivet::app::view_of(
                            rivet::Response(200).text(std::string(ex.head().target))));
                    }};
    std::unique_ptr<Client> a, b;

    // False when the loop could not be made busy.
    bool hold() {
        a = h.connect();
        a->send(get("/0"));
        if (a->read_responses(1).size() != 1u) return false;
        a->clear();
        b = h.connect();
        // Adopted first: /block is then read by an epoll event, not by the adoption.
        if (!h.sync()) return false;
        b->send(get("/block"));
        return h.app().wait_served(2);  // the loop is inside /block now
    }
    void release() { gate.set_value(); }
};

TEST(EngineDrain, RequestUnreadInTheSocketOfAnIdleConnectionIsAnswered) {
    // The race of issue 12: while the loop is busy (here a handler that blocks), a kept-alive
    // connection's next request arrives and the drain is posted. The loop runs the drain at the
    // end of that turn, before it reads the request: the connection looks idle but is not.
    BusyLoop busy;
    ASSERT_TRUE(busy.hold());
    auto& a = busy.a;
    a->send(get("/2"));
    busy.h.io().begin_drain();
    busy.release();
    auto got = a->read_responses(1);  // before the fix: EOF, no answer
    ASSERT_EQ(got.size(), 1u);
    EXPECT_EQ(got[0].body, "/2");
    EXPECT_EQ(got[0].field("Connection"), "close") << a->received();
    EXPECT_TRUE(a->wait_eof(1000ms));
    EXPECT_EQ(busy.b->read_responses(1).size(), 1u);
}

TEST(EngineDrain, ConnectionStillBusyAtTheDrainTimeoutIsCutOff) {
    // The harness sets the drain timeout to one second.
    EngineHarness h({}, [&](Exchange& ex) { h.app().keep(ex.defer()); });
    auto c = h.connect();
    c->send(get("/never"));
    auto deferred = h.app().take_deferred(1);
    ASSERT_EQ(deferred.size(), 1u);
    h.io().begin_drain();
    EXPECT_TRUE(c->wait_eof(2500ms));
    EXPECT_EQ(c->received(), "");
    deferred.clear();  // answering a connection that is gone is harmless
}

TEST(EngineDrain, PipelinedRequestsReadBeforeTheDrainAreAllAnswered) {
    // Three requests in one write, read while the loop winds down: each is answered, and only
    // the last says "Connection: close" (before: the first did, and the other two were lost).
    BusyLoop busy;
    ASSERT_TRUE(busy.hold());
    auto& a = busy.a;
    a->send(get("/1") + get("/2") + get("/3"));  // they wait in the socket
    busy.h.io().begin_drain();
    busy.release();
    auto got = a->read_responses(3);
    ASSERT_EQ(got.size(), 3u) << a->received();
    EXPECT_EQ(got[0].body, "/1");
    EXPECT_EQ(got[1].body, "/2");
    EXPECT_EQ(got[2].body, "/3");
    EXPECT_EQ(got[0].field("Connection"), "");
    EXPECT_EQ(got[1].field("Connection"), "");
    EXPECT_EQ(got[2].field("Connection"), "close");
    EXPECT_TRUE(a->wait_eof(1000ms));
}

TEST(EngineLameDuck, IdleConnectionStaysOpenAndItsNextAnswerSaysClose) {
    EngineHarness h;
    auto c = h.connect();
    c->send(get("/1"));
    auto first = c->read_responses(1);
    ASSERT_EQ(first.size(), 1u);
    EXPECT_EQ(first[0].field("Connection"), "");
    c->clear();
    h.io().begin_lame_duck();
    ASSERT_TRUE(h.sync());
    EXPECT_EQ(c->read_for(100ms), "");  // not closed: that would race the client's next request
    EXPECT_FALSE(c->eof());
    c->send(get("/2"));
    auto got = c->read_responses(1);
    ASSERT_EQ(got.size(), 1u);
    EXPECT_EQ(got[0].body, "GET /2 body=");
    EXPECT_EQ(got[0].field("Connection"), "close");
    EXPECT_TRUE(c->wait_eof(1000ms));
    // A connection that arrives during the lame duck is served too, once.
    auto fresh = h.connect();
    fresh->send(get("/3"));
    auto late = fresh->read_responses(1);
    ASSERT_EQ(late.size(), 1u);
    EXPECT_EQ(late[0].field("Connection"), "close");
    EXPECT_TRUE(fresh->wait_eof(1000ms));
}

// The lame duck holds from the moment begin_lame_duck() returns, on every loop: an answer the
// loop writes after that says "Connection: close", even one of the same turn. Before, the loop
// learned of it from a posted task, run at the end of its turn after that turn's events: a
// request that arrived with the wake-up was answered as if nothing had begun (seen under load,
// a new connection's answer without "close" after /healthz had said 503). Here the handler
// itself begins the lame duck, and its own answer is written in that turn.
TEST(EngineLameDuck, AnswersWrittenAfterItBeganSayCloseInTheSameTurn) {
    IoThread* io = nullptr;
    EngineHarness h({}, [&](Exchange& ex) {
        if (ex.head().target == "/begin") io->begin_lame_duck();
        ex.respond(rivet::app::view_of(rivet::Response(200).text(std::string(ex.head().target))));
    });
    io = &h.io();
    auto c = h.connect();
    c->send(get("/before"));
    auto first = c->read_responses(1);
    ASSERT_EQ(first.size(), 1u);
    EXPECT_EQ(first[0].field("Connection"), "");
    c->clear();
    c->send(get("/begin"));
    auto got = c->read_responses(1);
    ASSERT_EQ(got.size(), 1u);
    EXPECT_EQ(got[0].body, "/begin");
    EXPECT_EQ(got[0].field("Connection"), "close");  // before the fix: kept alive
    EXPECT_TRUE(c->wait_eof(1000ms));
}

TEST(EngineLameDuck, DeferredAnswerOwedWhenItBeganSaysClose) {
    EngineHarness h({}, [&](Exchange& ex) { h.app().keep(ex.defer()); });
    auto c = h.connect();
    c->send(get("/slow"));
    auto deferred = h.app().take_deferred(1);
    ASSERT_EQ(deferred.size(), 1u);
    h.io().begin_lame_duck();
    ASSERT_TRUE(h.sync());
    deferred[0].complete(rivet::app::reply_of(reply("late")));
    auto got = c->read_responses(1);
    ASSERT_EQ(got.size(), 1u);
    EXPECT_EQ(got[0].body, "late");
    EXPECT_EQ(got[0].field("Connection"), "close");
    EXPECT_TRUE(c->wait_eof(1000ms));
}

}  // namespace
}  // namespace rivet::engine::testing
