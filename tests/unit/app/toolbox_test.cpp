// The coroutine toolbox on a real App: when_all, when_any, with_timeout, until_complete and
// spawn, and what each does to the tasks it cancels.
#include <fcntl.h>
#include <gtest/gtest.h>

#include <atomic>
#include <memory>
#include <mutex>
#include <vector>

#include "coroutine_test_support.hpp"

namespace rivet::testing {
namespace {

// Counts destructor runs: the proof that a cancelled frame's locals are destroyed.
struct Tracked {
    std::atomic<int>* destroyed;
    ~Tracked() { ++*destroyed; }
};

// Appends "<name>+" when it starts and "<name>-" when it ends: the order shows concurrency.
Task<int> step(std::vector<std::string>& log, std::string name, int ms, int value) {
    log.push_back(name + "+");
    co_await sleep(std::chrono::milliseconds(ms));
    log.push_back(name + "-");
    co_return value;
}

Task<> sleeps_tracked(std::atomic<int>& destroyed, std::atomic<int>& finished, int ms) {
    Tracked t{&destroyed};
    co_await sleep(std::chrono::milliseconds(ms));
    ++finished;
}

Task<int> throws_after(int ms) {
    co_await sleep(std::chrono::milliseconds(ms));
    throw std::runtime_error("branch failed");
}

std::string join(const std::vector<std::string>& v) {
    std::string out;
    for (auto& s : v) out += (out.empty() ? "" : " ") + s;
    return out;
}

using ToolboxTest = WaitingAppTest;

TEST_F(ToolboxTest, WhenAllRunsTasksConcurrentlyAndGivesTheirValuesInOrder) {
    app_.get("/all", [](Request&, Response& res) -> Task<> {
        std::vector<std::string> log;
        auto [a, b, none] = co_await when_all(step(log, "a", 30, 1), step(log, "b", 1, 2),
                                              [](std::vector<std::string>& l) -> Task<> {
                                                  l.push_back("c");
                                                  co_return;
                                              }(log));
        static_assert(std::is_same_v<decltype(none), std::monostate>);
        res.text(std::to_string(a) + "," + std::to_string(b) + " " + join(log));
    });
    app_.get("/vector", [](Request&, Response& res) -> Task<> {
        std::vector<std::string> log;
        std::vector<Task<int>> tasks;
        for (int i = 0; i < 5; ++i) tasks.push_back(step(log, std::to_string(i), 5 - i, i * i));
        auto values = co_await when_all(std::move(tasks));
        std::string out;
        for (int v : values) out += std::to_string(v) + ";";
        auto none = co_await when_all(std::vector<Task<int>>{});
        res.text(out + " " + std::to_string(none.size()));
    });
    start(1);
    // Every task started before the first ended; b (1 ms) ended before a (30 ms).
    EXPECT_EQ(body_of(fetch("/all")), "1,2 a+ b+ c b- a-");
    EXPECT_EQ(body_of(fetch("/vector")), "0;1;4;9;16; 0");
}

TEST_F(ToolboxTest, WhenAllsFirstExceptionCancelsTheOthers) {
    std::atomic<int> destroyed{0}, finished{0};
    app_.get("/fail", [&](Request&, Response& res) -> Task<> {
        try {
            co_await when_all(sleeps_tracked(destroyed, finished, 10'000), throws_after(5),
                              sleeps_tracked(destroyed, finished, 10'000));
            res.text("not thrown");
        } catch (const std::runtime_error& e) {
            res.text(std::string(e.what()) + " " + std::to_string(destroyed.load()));
        }
    });
    start(1);
    EXPECT_EQ(body_of(fetch("/fail")), "branch failed 2");  // both sleepers gone at once
    EXPECT_EQ(finished.load(), 0);
}

TEST_F(ToolboxTest, WhenAnyGivesTheFirstAndCancelsTheRest) {
    std::atomic<int> destroyed{0}, finished{0};
    app_.get("/any", [&](Request&, Response& res) -> Task<> {
        std::vector<std::string> log;
        auto first = co_await when_any(sleeps_tracked(destroyed, finished, 10'000),
                                       step(log, "fast", 2, 42));
        res.text(std::to_string(first.index()) + ":" + std::to_string(std::get<1>(first)) + " " +
                 std::to_string(destroyed.load()));
    });
    app_.get("/any-vector", [&](Request&, Response& res) -> Task<> {
        std::vector<std::string> log;
        std::vector<Task<int>> tasks;
        tasks.push_back(step(log, "slow", 10'000, 1));
        tasks.push_back(step(log, "quick", 1, 2));
        auto [index, value] = co_await when_any(std::move(tasks));
        res.text(std::to_string(index) + ":" + std::to_string(value) + " " + join(log));
    });
    app_.get("/any-throws", [&](Request&, Response&) -> Task<> {
        co_await when_any(sleeps_tracked(destroyed, finished, 10'000), throws_after(1));
    });
    start(1);
    EXPECT_EQ(body_of(fetch("/any")), "1:42 1");
    EXPECT_EQ(body_of(fetch("/any-vector")), "1:2 slow+ quick+ quick-");
    auto thrown = fetch("/any-throws");
    EXPECT_TRUE(thrown.starts_with("HTTP/1.1 500")) << thrown;
    EXPECT_EQ(destroyed.load(), 2);
    EXPECT_EQ(finished.load(), 0);
}

TEST_F(ToolboxTest, WithTimeoutGivesTheValueOrCancelsAndAnswers504) {
    std::atomic<int> destroyed{0}, finished{0};
    app_.get("/in-time", [](Request&, Response& res) -> Task<> {
        std::vector<std::string> log;
        int v = co_await with_timeout(step(log, "x", 1, 7), 10s);
        res.text(std::to_string(v));
    });
    app_.get("/late", [&](Request&, Response&) -> Task<> {
        co_await with_timeout(sleeps_tracked(destroyed, finished, 10'000), 20ms);
    });
    app_.get("/caught", [&](Request&, Response& res) -> Task<> {
        try {
            co_await with_timeout(sleep(10s), 5ms);  // any awaitable, not only a Task
        } catch (const TimeoutError& e) {
            res.text(std::to_string(e.status()));
        }
    });
    start(1);
    EXPECT_EQ(body_of(fetch("/in-time")), "7");
    auto late = fetch("/late");
    EXPECT_TRUE(late.starts_with("HTTP/1.1 504")) << late;
    EXPECT_EQ(destroyed.load(), 1);
    EXPECT_EQ(finished.load(), 0);
    EXPECT_EQ(body_of(fetch("/caught")), "504");
}

TEST_F(ToolboxTest, ReadyWaitsForEitherDirectionAndSaysWhich) {
    int p[2];
    ASSERT_EQ(pipe2(p, O_NONBLOCK | O_CLOEXEC), 0);
    app_.get("/either", [&](Request&, Response& res) -> Task<> {
        Interest w = co_await ready(p[1], Interest::Read | Interest::Write);  // writable now
        Interest r = co_await ready(p[0], Interest::Read);                    // the test's byte
        res.text(std::to_string(int(w)) + " " + std::to_string(int(r)));
    });
    start(1);
    RawClient c(port_);
    c.get("/either");
    ASSERT_EQ(write(p[1], "x", 1), 1);  // before or after the handler waits: either works
    EXPECT_EQ(body_of(c.read_responses(1)), "2 1");
    close(p[0]);
    close(p[1]);
}

TEST_F(ToolboxTest, AnFdWatchWaitsAgainAndAgainAndNoticesWhatComesWhileNobodyWaits) {
    int p[2];
    ASSERT_EQ(pipe2(p, O_NONBLOCK | O_CLOEXEC), 0);
    std::unique_ptr<FdWatch> watch;  // outlives the app: closed after its loops ended
    std::atomic<int> waiting{0};
    app_.get("/open", [&](Request&, Response& res) {
        watch = std::make_unique<FdWatch>(p[0]);
        res.text("open");
    });
    app_.get("/read", [&](Request&, Response& res) -> Task<> {
        ++waiting;
        Interest got = co_await watch->wait(Interest::Read);
        char buf[16];
        ssize_t n = read(p[0], buf, sizeof buf);
        res.text(std::to_string(int(got)) + ":" + std::string(buf, size_t(n > 0 ? n : 0)));
    });
    app_.get("/stirred", [&](Request&, Response& res) {
        res.text(watch->stirred() ? "yes" : "no");
        watch->clear_stirred();
    });
    start(1);
    EXPECT_EQ(body_of(fetch("/open")), "open");
    for (std::string word : {"a", "b", "c"}) {  // the same registration, wait after wait
        RawClient c(port_);
        int before = waiting.load();
        c.get("/read");
        // Written once the handler waits: a byte that came first would stir the watch (it
        // would be ready with nobody waiting), which is checked below, not here.
        ASSERT_TRUE(eventually([&] { return waiting.load() == before + 1; }));
        ASSERT_EQ(write(p[1], word.data(), 1), 1);
        EXPECT_EQ(body_of(c.read_responses(1)), "1:" + word);
    }
    EXPECT_EQ(body_of(fetch("/stirred")), "no");
    ASSERT_EQ(write(p[1], "x", 1), 1);  // nobody waits: noticed, not lost
    ASSERT_TRUE(eventually([&] { return body_of(fetch("/stirred")) == "yes"; }));
    EXPECT_EQ(body_of(fetch("/read")), "1:x");  // still there: the next wait ends at once
    {
        RawClient c(port_);  // a waiter whose client leaves is cancelled
        int before = waiting.load();
        c.get("/read");
        ASSERT_TRUE(eventually([&] { return waiting.load() == before + 1; }));
        c.close(true);
    }
    ASSERT_TRUE(eventually([&] {
        return metrics().find("\nrivet_handlers_cancelled_total 1\n") != std::string::npos;
    }));
    ASSERT_EQ(write(p[1], "y", 1), 1);
    EXPECT_EQ(body_of(fetch("/read")), "1:y");  // and the next waiter is served
    app_.stop();
    watch.reset();
    close(p[0]);
    close(p[1]);
}

// The awaitable that crashed a user's server: resumed from a timer after its client had left.
// Through Completion the late callback finds the frame gone and does nothing.
TEST_F(ToolboxTest, ACompletionOutlivingItsCancelledCoroutineIsHarmless) {
    std::atomic<int> destroyed{0}, cancels{0}, fired{0}, waiting{0};
    app_.get("/timer", [&](Request&, Response& res) -> Task<> {
        Tracked t{&destroyed};
        int v = co_await until_complete<int>([&](Completion<int> c) {
            EventLoop::current()->call_after(150ms, [c, &fired] {
                c.done(5);  // the frame is gone by now: ignored
                ++fired;
            });
            c.on_cancel([&] { ++cancels; });
            ++waiting;
        });
        res.text(std::to_string(v));
    });
    app_.get("/thread", [](Request&, Response& res) -> Task<> {
        int v = co_await until_complete<int>([](Completion<int> c) {
            std::thread([c] { c.done(11); }).detach();  // from another thread
        });
        try {
            co_await until_complete<>([](Completion<> c) {
                c.fail(std::make_exception_ptr(std::runtime_error("failed")));
            });
        } catch (const std::runtime_error& e) {
            res.text(std::to_string(v) + " " + e.what());
        }
    });
    start(1);
    {
        RawClient c(port_);
        c.get("/timer");
        ASSERT_TRUE(eventually([&] { return waiting.load() == 1; }));
        c.close(true);
    }
    ASSERT_TRUE(eventually([&] { return destroyed.load() == 1; }));
    EXPECT_EQ(cancels.load(), 1);
    ASSERT_TRUE(eventually([&] { return fired.load() == 1; }, 10s));
    EXPECT_EQ(body_of(fetch("/thread")), "11 failed");
}

// A cancelled when_all whose branches both wait for workers: each branch's frame lives until
// its own job ends, then goes without resuming.
TEST_F(ToolboxTest, CancelledBranchesOutliveTheirRunningWorkerJobs) {
    Gate gate;
    std::atomic<int> destroyed{0}, after{0};
    auto job = [&]() -> Task<size_t> {
        Tracked t{&destroyed};
        std::string local = "branch data";
        size_t n = co_await on_workers([&] {
            gate.wait();
            return local.size();  // reads the branch's frame
        });
        ++after;
        co_return n;
    };
    app_.get("/two-jobs", [&](Request&, Response& res) -> Task<> {
        auto [a, b] = co_await when_all(job(), job());
        res.text(std::to_string(a + b));
    });
    start(1, 2);
    RawClient c(port_);
    c.get("/two-jobs");
    ASSERT_TRUE(eventually([&] { return gate.inside.load() == 2; }));
    c.close(true);
    ASSERT_TRUE(eventually([&] {
        return metrics().find("\nrivet_handlers_cancelled_total 1\n") != std::string::npos;
    }));
    EXPECT_EQ(destroyed.load(), 0) << "a branch was destroyed while its job still ran";
    gate.release();
    ASSERT_TRUE(eventually([&] { return destroyed.load() == 2; }));
    EXPECT_EQ(after.load(), 0);
}

TEST_F(ToolboxTest, SpawnedTasksRunInTheBackgroundAndEndWhenTheAppStops) {
    std::atomic<int> ticks{0}, destroyed{0};
    app_.get("/start", [&](Request&, Response& res) -> Task<> {
        spawn([](std::atomic<int>& ticks, std::atomic<int>& destroyed) -> Task<> {
            Tracked t{&destroyed};
            for (;;) {
                ++ticks;
                co_await sleep(5ms);
            }
        }(ticks, destroyed));
        spawn([]() -> Task<> {
            co_await sleep(1ms);
            throw std::runtime_error("a background failure is logged, not fatal");
        }());
        res.text("started");
        co_return;
    });
    start(1);
    EXPECT_EQ(body_of(fetch("/start")), "started");
    ASSERT_TRUE(eventually([&] { return ticks.load() >= 3; }));  // it runs after the answer
    EXPECT_EQ(body_of(fetch("/start")).size(), 7u);              // the loop still serves
    ASSERT_TRUE(eventually([&] { return ticks.load() >= 6; }));
    EXPECT_EQ(destroyed.load(), 0);
    app_.stop();
    EXPECT_EQ(destroyed.load(), 2);  // both tickers cancelled when the app stopped
}

}  // namespace
}  // namespace rivet::testing
