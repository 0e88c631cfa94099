// Answers made later (Exchange::defer, Deferred::complete from another thread) still leave in
// request order.
#include <gtest/gtest.h>

#include <string>
#include <thread>
#include <vector>

#include "engine_harness.hpp"

namespace rivet::engine::testing {
namespace {

// Requests to /defer... are deferred and kept for the test; the rest are answered at once.
void defer_or_echo(EngineHarness& h, Exchange& ex) {
    if (ex.head().path.starts_with("/defer")) return h.app().keep(ex.defer());
    ex.respond(
        rivet::app::view_of(rivet::Response(200).text("inline " + std::string(ex.head().path))));
}

TEST(EngineDeferred, CompletedAfterALaterInlineAnswerStillLeavesFirst) {
    EngineHarness h({}, [&](Exchange& ex) { defer_or_echo(h, ex); });
    auto c = h.connect();
    c->send(get("/defer") + get("/now"));
    ASSERT_TRUE(h.app().wait_served(2));
    auto deferred = h.app().take_deferred(1);
    ASSERT_EQ(deferred.size(), 1u);
    // /now is answered already, but must wait behind /defer.
    EXPECT_EQ(c->read_for(100ms), "");
    std::thread worker([d = std::move(deferred[0])]() mutable {
        d.complete(rivet::app::reply_of(reply("deferred")));
    });
    worker.join();
    auto got = c->read_responses(2);
    ASSERT_EQ(got.size(), 2u);
    EXPECT_EQ(got[0].body, "deferred");
    EXPECT_EQ(got[1].body, "inline /now");
    EXPECT_FALSE(c->eof());
}

TEST(EngineDeferred, SeveralCompletedInReverseOrderLeaveInRequestOrder) {
    EngineHarness h({}, [&](Exchange& ex) { defer_or_echo(h, ex); });
    auto c = h.connect();
    c->send(get("/defer1") + get("/defer2") + get("/inline") + get("/defer3"));
    auto deferred = h.app().take_deferred(3);
    ASSERT_EQ(deferred.size(), 3u);
    std::thread worker([&] {
        deferred[2].complete(rivet::app::reply_of(reply("three")));
        deferred[1].complete(rivet::app::reply_of(reply("two")));
    });
    worker.join();
    // Two and three are ready but one is not: nothing may leave.
    EXPECT_EQ(c->read_for(100ms), "");
    std::thread([&] { deferred[0].complete(rivet::app::reply_of(reply("one"))); }).join();
    auto got = c->read_responses(4);
    ASSERT_EQ(got.size(), 4u);
    EXPECT_EQ(got[0].body, "one");
    EXPECT_EQ(got[1].body, "two");
    EXPECT_EQ(got[2].body, "inline /inline");
    EXPECT_EQ(got[3].body, "three");
}

TEST(EngineDeferred, PipelineLimitPausesReadingUntilAnswersLeave) {
    ServerConfig config;
    config.limits.max_pipelined = 2;
    EngineHarness h(config, [&](Exchange& ex) { defer_or_echo(h, ex); });
    auto c = h.connect();
    c->send(get("/defer1") + get("/defer2") + get("/defer3") + get("/inline"));
    auto first = h.app().take_deferred(2);
    ASSERT_EQ(first.size(), 2u);
    // Two answers owed: the requests behind them wait unparsed.
    EXPECT_FALSE(h.app().wait_served(3, 100ms));
    first[0].complete(rivet::app::reply_of(reply("one")));
    first[1].complete(rivet::app::reply_of(reply("two")));
    auto rest = h.app().take_deferred(1);
    ASSERT_EQ(rest.size(), 1u);
    rest[0].complete(rivet::app::reply_of(reply("three")));
    auto got = c->read_responses(4);
    ASSERT_EQ(got.size(), 4u);
    EXPECT_EQ(got[0].body, "one");
    EXPECT_EQ(got[1].body, "two");
    EXPECT_EQ(got[2].body, "three");
    EXPECT_EQ(got[3].body, "inline /inline");
}

TEST(EngineDeferred, ProtocolErrorBehindADeferredAnswerWaitsForIt) {
    EngineHarness h({}, [&](Exchange& ex) { defer_or_echo(h, ex); });
    auto c = h.connect();
    c->send(get("/defer") + "NOT HTTP\r\n\r\n");
    auto deferred = h.app().take_deferred(1);
    ASSERT_EQ(deferred.size(), 1u);
    EXPECT_EQ(c->read_for(100ms), "");  // the 400 may not overtake the answer before it
    deferred[0].complete(rivet::app::reply_of(reply("first")));
    auto got = c->read_responses(3);
    ASSERT_EQ(got.size(), 2u);
    EXPECT_EQ(got[0].body, "first");
    EXPECT_EQ(got[1].status, 400);
    EXPECT_TRUE(c->wait_eof());
}

TEST(EngineDeferred, FollowingRequestsAfterCompletionAreStillServed) {
    EngineHarness h({}, [&](Exchange& ex) { defer_or_echo(h, ex); });
    auto c = h.connect();
    c->send(get("/defer"));
    auto deferred = h.app().take_deferred(1);
    ASSERT_EQ(deferred.size(), 1u);
    deferred[0].complete(rivet::app::reply_of(reply("made", 201)));
    auto got = c->read_responses(1);
    ASSERT_EQ(got.size(), 1u);
    EXPECT_EQ(got[0].status, 201);
    c->clear();
    c->send(get("/again"));
    got = c->read_responses(1);
    ASSERT_EQ(got.size(), 1u);
    EXPECT_EQ(got[0].body, "inline /again");
}

TEST(EngineDeferred, DroppedWithoutCompleteAnswers500) {
    EngineHarness h({}, [&](Exchange& ex) { defer_or_echo(h, ex); });
    auto c = h.connect();
    c->send(get("/defer") + get("/after"));
    auto deferred = h.app().take_deferred(1);
    ASSERT_EQ(deferred.size(), 1u);
    std::thread([d = std::move(deferred[0])] {}).join();  // dropped on another thread
    auto got = c->read_responses(2);
    ASSERT_EQ(got.size(), 2u);
    EXPECT_EQ(got[0].status, 500);
    EXPECT_EQ(got[1].body, "inline /after");
    EXPECT_FALSE(c->eof());
}

TEST(EngineDeferred, DroppedInsideTheHandlerAnswers500) {
    EngineHarness h({}, [](Exchange& ex) { Deferred d = ex.defer(); });
    auto c = h.connect();
    c->send(get("/x") + get("/y"));
    auto got = c->read_responses(2);
    ASSERT_EQ(got.size(), 2u);
    EXPECT_EQ(got[0].status, 500);
    EXPECT_EQ(got[1].status, 500);
}

TEST(EngineDeferred, CompletionForAClosedConnectionIsHarmless) {
    EngineHarness h({}, [&](Exchange& ex) { defer_or_echo(h, ex); });
    auto c = h.connect();
    c->send(get("/defer"));
    auto deferred = h.app().take_deferred(1);
    ASSERT_EQ(deferred.size(), 1u);
    c.reset();  // the client goes away while the answer is being made
    // A new connection may even reuse the old one's descriptor: it must not get the answer.
    auto c2 = h.connect();
    deferred[0].complete(rivet::app::reply_of(reply("stale")));
    c2->send(get("/fresh"));
    auto got = c2->read_responses(1);
    ASSERT_EQ(got.size(), 1u);
    EXPECT_EQ(got[0].body, "inline /fresh");
    EXPECT_EQ(c2->read_for(50ms), "");
}

}  // namespace
}  // namespace rivet::engine::testing
