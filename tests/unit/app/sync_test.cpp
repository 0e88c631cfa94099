// Semaphore, Event and Channel (rivet/sync.hpp) between coroutines of one loop, on a real App.
#include <gtest/gtest.h>

#include <atomic>
#include <memory>
#include <string>
#include <vector>

#include "coroutine_test_support.hpp"

namespace rivet::testing {
namespace {

using SyncTest = WaitingAppTest;

// Two permits, a gate every holder waits at, and room for two waiters: the fifth is refused.
TEST_F(SyncTest, ASemaphoreBoundsHoldersAndItsWaitQueue) {
    Semaphore slots(2, 2);
    Event gate;
    std::atomic<int> holding{0}, most{0};
    app_.get("/slot", [&](Request&, Response& res) -> Task<> {
        auto permit = co_await slots.acquire();
        most = std::max(most.load(), ++holding);
        co_await gate.wait();
        --holding;
        res.text("done");
    });
    app_.get("/open", [&](Request&, Response& res) {
        gate.set();
        res.text(std::to_string(slots.waiting()));
    });
    start(1);
    std::vector<std::unique_ptr<RawClient>> clients;
    for (int i = 0; i < 4; ++i) {
        clients.push_back(std::make_unique<RawClient>(port_));
        clients.back()->get("/slot");
    }
    ASSERT_TRUE(eventually([&] { return holding.load() == 2; }));
    auto refused = fetch("/slot");  // 2 hold, 2 wait: no room
    EXPECT_TRUE(refused.starts_with("HTTP/1.1 503")) << refused;
    EXPECT_NE(refused.find("Retry-After: 1\r\n"), std::string::npos) << refused;
    EXPECT_EQ(body_of(fetch("/open")), "2");
    for (auto& c : clients) EXPECT_EQ(body_of(c->read_responses(1)), "done");
    EXPECT_EQ(most.load(), 2);
    EXPECT_EQ(slots.available(), 2u);
}

// A waiter whose client leaves gives up its place; one cancelled after it was handed a permit
// (woken, not yet resumed) passes the permit on rather than losing it.
TEST_F(SyncTest, CancelledWaitersLeaveTheQueueAndPassOnWhatTheyWereGiven) {
    Semaphore slots(1);
    std::optional<Semaphore::Permit> held;
    app_.get("/take", [&](Request&, Response& res) {
        held = slots.try_acquire();
        res.text(held ? "held" : "none");
    });
    app_.get("/wait", [&](Request&, Response& res) -> Task<> {
        auto permit = co_await slots.acquire();
        res.text("got");
    });
    app_.get("/state", [&](Request&, Response& res) {
        res.text(std::to_string(slots.available()) + "/" + std::to_string(slots.waiting()));
    });
    app_.get("/handed-then-cancelled", [&](Request&, Response& res) -> Task<> {
        Semaphore one(1);
        auto first = co_await one.acquire();
        // Branch 0 waits; branch 1 releases (handing the permit to branch 0) and ends at once,
        // so when_any cancels branch 0 before it could resume.
        auto releaser = [](Semaphore::Permit p) -> Task<> {
            p.reset();
            co_return;
        };
        auto waiter = [](Semaphore& s) -> Task<> { auto p = co_await s.acquire(); };
        co_await when_any(waiter(one), releaser(std::move(first)));
        // A permit (not default-constructible) through with_timeout: the one passed on is there.
        Semaphore::Permit again = co_await with_timeout(one.acquire(), 10s);
        again.reset();
        res.text(std::to_string(one.available()) + "/" + std::to_string(one.waiting()));
    });
    start(1);
    EXPECT_EQ(body_of(fetch("/take")), "held");
    {
        RawClient c(port_);
        c.get("/wait");
        ASSERT_TRUE(eventually([&] { return body_of(fetch("/state")) == "0/1"; }));
        c.close(true);
    }
    ASSERT_TRUE(eventually([&] { return body_of(fetch("/state")) == "0/0"; }));
    EXPECT_EQ(body_of(fetch("/handed-then-cancelled")), "1/0");
    app_.loop(0).post([&] { held.reset(); });  // on the loop that owns the semaphore
    ASSERT_TRUE(eventually([&] { return body_of(fetch("/state")) == "1/0"; }));
    EXPECT_EQ(body_of(fetch("/wait")), "got");
}

TEST_F(SyncTest, AnEventWakesEveryWaiterAndStaysSetUntilReset) {
    Event ready;
    std::atomic<int> woken{0};
    app_.get("/wait", [&](Request&, Response& res) -> Task<> {
        co_await ready.wait();
        ++woken;
        res.text("woken");
    });
    app_.get("/set", [&](Request&, Response& res) {
        ready.set();
        res.text("set");
    });
    app_.get("/reset", [&](Request&, Response& res) {
        ready.reset();
        res.text(std::to_string(ready.waiting()));
    });
    start(1);
    std::vector<std::unique_ptr<RawClient>> clients;
    for (int i = 0; i < 3; ++i) {
        clients.push_back(std::make_unique<RawClient>(port_));
        clients.back()->get("/wait");
    }
    ASSERT_TRUE(eventually([&] { return body_of(fetch("/reset")) == "3"; }));
    EXPECT_EQ(body_of(fetch("/set")), "set");
    for (auto& c : clients) EXPECT_EQ(body_of(c->read_responses(1)), "woken");
    EXPECT_EQ(body_of(fetch("/wait")), "woken");  // still set: passes at once
    EXPECT_EQ(woken.load(), 4);
}

TEST_F(SyncTest, AChannelCarriesItemsInOrderWithBackpressureAndEndsWhenClosed) {
    app_.get("/pipe", [](Request&, Response& res) -> Task<> {
        Channel<int> ch(2);
        std::string log;
        auto producer = [](Channel<int>& ch, std::string& log) -> Task<> {
            for (int i = 1; i <= 5; ++i) {
                co_await ch.send(i);  // waits while two are queued
                log += "s" + std::to_string(i) + " ";
            }
            ch.close();
        };
        auto consumer = [](Channel<int>& ch, std::string& log) -> Task<int> {
            int sum = 0;
            while (auto v = co_await ch.receive()) {
                log += "r" + std::to_string(*v) + " ";
                sum += *v;
                co_await sleep(1ms);
            }
            co_return sum;
        };
        auto [none, sum] = co_await when_all(producer(ch, log), consumer(ch, log));
        (void)none;
        bool refused = false;
        try {
            co_await ch.send(6);
        } catch (const ChannelClosed&) {
            refused = true;
        }
        // Closed and drained: a receive ends at once, however often it is asked.
        const bool drained = !(co_await ch.receive()) && !(co_await ch.receive());
        res.text(std::to_string(sum) + (refused ? " closed " : " open ") +
                 (drained ? "drained " : "items ") + log);
    });
    start(1);
    auto body = body_of(fetch("/pipe"));
    EXPECT_TRUE(body.starts_with("15 closed drained ")) << body;
    // Backpressure: the third send completes only after the first receive.
    EXPECT_LT(body.find("r1 "), body.find("s3 ")) << body;
    for (int i = 1; i <= 5; ++i)
        EXPECT_NE(body.find(std::string("r").append(std::to_string(i)).append(" ")),
                  std::string::npos)
            << body;
}

}  // namespace
}  // namespace rivet::testing
