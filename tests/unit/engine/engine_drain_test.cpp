// Graceful stop (IoThread::begin_drain): idle connections close at once, answers in flight are
// still sent (with "Connection: close"), and nothing waits past the drain timeout.
#include <gtest/gtest.h>

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

}  // namespace
}  // namespace rivet::engine::testing
