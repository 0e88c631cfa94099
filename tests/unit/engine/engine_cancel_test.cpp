// A connection that closes while a deferred answer is owed tells the Deferred's holder (the
// cancel callback), on the loop's thread, once, and never after the answer was completed.
#include <gtest/gtest.h>

#include <atomic>
#include <thread>

#include "engine_harness.hpp"

namespace rivet::engine::testing {
namespace {

struct CancelCounter {
    std::atomic<int> calls{0};
    std::atomic<bool> on_loop_thread{true};
};

// /defer... is deferred (a cancel callback counts into `counter`) and kept by the test app, or
// in `own` when given; the rest is answered at once.
TestApp::Handler deferring(EngineHarness& h, CancelCounter& counter,
                           std::vector<Deferred>* own = nullptr) {
    return [&h, &counter, own](Exchange& ex) {
        if (!ex.head().path.starts_with("/defer")) {
            return ex.respond(rivet::app::view_of(rivet::Response(200).text("inline")));
        }
        Deferred d = ex.defer();
        auto* loop = &h.io().loop();
        d.on_cancel([&counter, loop] {
            if (!loop->on_loop_thread()) counter.on_loop_thread = false;
            ++counter.calls;
        });
        if (own)
            own->push_back(std::move(d));
        else
            h.app().keep(std::move(d));
    };
}

bool wait_for(const std::function<bool()>& done, Millis timeout = 2000ms) {
    auto until = std::chrono::steady_clock::now() + timeout;
    while (!done()) {
        if (std::chrono::steady_clock::now() > until) return false;
        std::this_thread::sleep_for(2ms);
    }
    return true;
}

TEST(EngineCancel, ClientCloseCancelsTheOwedAnswerOnceOnTheLoopThread) {
    CancelCounter counter;
    EngineHarness h({}, [&](Exchange& ex) { deferring(h, counter)(ex); });
    auto c = h.connect();
    c->send(get("/defer"));
    auto kept = h.app().take_deferred(1);
    ASSERT_EQ(kept.size(), 1u);
    c.reset();  // the client goes away
    ASSERT_TRUE(wait_for([&] { return counter.calls.load() == 1; }));
    EXPECT_TRUE(counter.on_loop_thread);
    EXPECT_TRUE(kept[0].cancelled());
    // Completing afterwards (from another thread) goes nowhere and cancels nothing again.
    std::thread([&] { kept[0].complete(rivet::app::reply_of(reply("late"))); }).join();
    ASSERT_TRUE(h.sync());
    EXPECT_EQ(counter.calls.load(), 1);
    EXPECT_EQ(h.io().stats().read().cancelled, 1u);
}

TEST(EngineCancel, EofWhileAnAnswerIsOwedIsTheClientGoingAway) {
    CancelCounter counter;
    EngineHarness h({}, [&](Exchange& ex) { deferring(h, counter)(ex); });
    auto c = h.connect();
    c->send(get("/now") + get("/defer"));
    auto kept = h.app().take_deferred(1);
    ASSERT_EQ(kept.size(), 1u);
    c->shutdown_write();
    // Closed at once, as nginx does (499): the inline answer already left, the deferred never.
    ASSERT_TRUE(c->wait_eof());
    auto got = parse_responses(c->received());
    ASSERT_EQ(got.size(), 1u);
    EXPECT_EQ(got[0].body, "inline");
    ASSERT_TRUE(wait_for([&] { return counter.calls.load() == 1; }));
    EXPECT_EQ(h.io().stats().read().cancelled, 1u);
}

TEST(EngineCancel, EofWithOnlyInlineAnswersOwedStillAnswers) {
    CancelCounter counter;
    EngineHarness h({}, [&](Exchange& ex) { deferring(h, counter)(ex); });
    auto c = h.connect();
    c->send(get("/a") + get("/b"));
    c->shutdown_write();
    ASSERT_TRUE(c->wait_eof());
    EXPECT_EQ(parse_responses(c->received()).size(), 2u);
    ASSERT_TRUE(h.sync());
    EXPECT_EQ(counter.calls.load(), 0);
}

TEST(EngineCancel, AnAnswerCompletedBeforeTheCloseIsNeverCancelled) {
    for (int round = 0; round < 20; ++round) {
        CancelCounter counter;
        EngineHarness h({}, [&](Exchange& ex) { deferring(h, counter)(ex); });
        auto c = h.connect();
        c->send(get("/defer"));
        auto kept = h.app().take_deferred(1);
        ASSERT_EQ(kept.size(), 1u);
        // The completion races the close: whichever the loop sees first, complete() was called
        // before the close, so no cancel may follow.
        std::thread worker([&] { kept[0].complete(rivet::app::reply_of(reply("done"))); });
        worker.join();
        c.reset();
        ASSERT_TRUE(h.sync());
        ASSERT_TRUE(h.sync());
        EXPECT_EQ(counter.calls.load(), 0) << "round " << round;
        EXPECT_EQ(h.io().stats().read().cancelled, 0u);
    }
}

TEST(EngineCancel, EveryOwedAnswerIsCancelledOnceAndAReadyOneIsNot) {
    CancelCounter counter;
    EngineHarness h({}, [&](Exchange& ex) { deferring(h, counter)(ex); });
    auto c = h.connect();
    c->send(get("/defer1") + get("/defer2") + get("/defer3"));
    auto kept = h.app().take_deferred(3);
    ASSERT_EQ(kept.size(), 3u);
    kept[1].complete(rivet::app::reply_of(reply("two")));  // ready, waiting behind the first
    ASSERT_TRUE(h.sync());
    c.reset();
    ASSERT_TRUE(wait_for([&] { return counter.calls.load() == 2; }));
    ASSERT_TRUE(h.sync());
    EXPECT_EQ(counter.calls.load(), 2);
    EXPECT_EQ(h.io().stats().read().cancelled, 2u);
}

TEST(EngineCancel, ACallbackMayDropItsDeferredAndTheConnectionIsNotTouchedAfter) {
    std::atomic<int> cancels{0};
    auto holder = std::make_shared<Deferred>();
    EngineHarness h({}, [&](Exchange& ex) {
        *holder = ex.defer();
        holder->on_cancel([&cancels, holder] {
            ++cancels;
            *holder = Deferred();  // drops it: its 500 must go nowhere
        });
    });
    auto c = h.connect();
    c->send(get("/x"));
    ASSERT_TRUE(h.app().wait_served(1));
    c.reset();
    ASSERT_TRUE(wait_for([&] { return cancels.load() == 1; }));
    ASSERT_TRUE(h.sync());
    EXPECT_FALSE(holder->valid());
}

TEST(EngineCancel, TheDrainTimeoutCuttingAConnectionOffCancelsToo) {
    CancelCounter counter;
    std::vector<Deferred> own;  // not the app's: those are answered 500 before the drain
    std::unique_ptr<EngineHarness> h;
    h = std::make_unique<EngineHarness>(ServerConfig{},
                                        [&](Exchange& ex) { deferring(*h, counter, &own)(ex); });
    auto c = h->connect();
    c->send(get("/defer"));
    ASSERT_TRUE(h->app().wait_served(1));
    ASSERT_TRUE(h->sync());
    h.reset();  // drains: the owed answer never comes, the drain timeout cuts it off
    EXPECT_EQ(counter.calls.load(), 1);
    ASSERT_EQ(own.size(), 1u);
    EXPECT_TRUE(own[0].cancelled());
}

}  // namespace
}  // namespace rivet::engine::testing
