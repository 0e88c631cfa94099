// Coroutine handlers (rivet::Task<>) on a real App: nested tasks, exceptions, timers, fd
// readiness, worker awaits, and cancellation destroying frames at their suspension.
#include <fcntl.h>
#include <gtest/gtest.h>

#include <atomic>
#include <condition_variable>
#include <mutex>

#include "coroutine_test_support.hpp"

namespace rivet::testing {
namespace {

Task<int> add_later(int a, int b, int ms) {
    if (ms > 0) co_await sleep(std::chrono::milliseconds(ms));
    co_return a + b;
}

Task<std::string> fails_later(int ms) {
    if (ms > 0) co_await sleep(std::chrono::milliseconds(ms));
    throw std::runtime_error("inner failure");
    co_return "unreachable";
}

// Counts destructor runs: the proof that a cancelled frame's locals are destroyed.
struct Tracked {
    std::atomic<int>* destroyed;
    ~Tracked() { ++*destroyed; }
};

using CoroutineTest = WaitingAppTest;

TEST_F(CoroutineTest, AHandlerThatNeverWaitsAnswersLikeAPlainOne) {
    app_.get("/now", [](Request& req, Response& res) -> Task<> {
        int n = co_await add_later(2, 3, 0);  // a nested task that does not suspend either
        res.text(std::string(req.path()) + " " + std::to_string(n));
        co_return;
    });
    start();
    auto got = fetch("/now");
    EXPECT_TRUE(got.starts_with("HTTP/1.1 200 OK\r\n")) << got;
    EXPECT_EQ(body_of(got), "/now 5");
}

TEST_F(CoroutineTest, NestedTasksPassValuesAndExceptionsThroughAwaits) {
    app_.get("/sum", [](Request&, Response& res) -> Task<> {
        int a = co_await add_later(1, 2, 5);
        int b = co_await add_later(a, 10, 5);
        res.text(std::to_string(b));
    });
    app_.get("/caught", [](Request&, Response& res) -> Task<> {
        try {
            co_await fails_later(5);
            res.text("not thrown");
        } catch (const std::runtime_error& e) {
            res.text(std::string("caught: ") + e.what());
        }
    });
    app_.get("/uncaught", [](Request&, Response&) -> Task<> {
        co_await fails_later(5);  // escapes the handler: 500, counted
    });
    app_.get("/http-error", [](Request&, Response&) -> Task<> {
        co_await sleep(1ms);
        throw HttpError(409, "taken").header("X-Why", "conflict");
    });
    start();
    EXPECT_EQ(body_of(fetch("/sum")), "13");
    EXPECT_EQ(body_of(fetch("/caught")), "caught: inner failure");
    auto uncaught = fetch("/uncaught");
    EXPECT_TRUE(uncaught.starts_with("HTTP/1.1 500")) << uncaught;
    auto conflict = fetch("/http-error");
    EXPECT_TRUE(conflict.starts_with("HTTP/1.1 409")) << conflict;
    EXPECT_NE(conflict.find("X-Why: conflict\r\n"), std::string::npos) << conflict;
    // The runtime_error escaping /uncaught; an HttpError is an answer, not a failure.
    EXPECT_NE(metrics().find("\nrivet_handler_exceptions_total 1\n"), std::string::npos);
}

TEST_F(CoroutineTest, ASleepingHandlerDoesNotHoldItsLoop) {
    app_.get("/slow", [](Request&, Response& res) -> Task<> {
        co_await sleep(400ms);
        res.text("slow");
    });
    app_.get("/fast", [](Request&, Response& res) { res.text("fast"); });
    start(1);  // one loop: a blocking wait would hold /fast behind it
    RawClient slow(port_);
    slow.get("/slow");
    auto t0 = std::chrono::steady_clock::now();
    for (int i = 0; i < 20; ++i) EXPECT_EQ(body_of(fetch("/fast")), "fast");
    auto fast_took = std::chrono::steady_clock::now() - t0;
    EXPECT_EQ(body_of(slow.read_responses(1)), "slow");
    auto slow_took = std::chrono::steady_clock::now() - t0;
    // Counted, not timed tightly: 20 fast answers came while the slow one still waited.
    EXPECT_LT(fast_took, slow_took);
    EXPECT_GE(slow_took, 350ms);
}

TEST_F(CoroutineTest, TheRequestStaysValidAcrossSuspensionsWhilePipelinedOnesReuseTheBuffer) {
    app_.get("/item/:id", [](Request& req, Response& res) -> Task<> {
        co_await sleep(
            std::chrono::milliseconds(30 - 10 * std::stoi(std::string(req.param("id")))));
        res.text(std::string(req.param("id")) + " " + std::string(req.header("X-Tag")) + " " +
                 std::string(req.path()) + " " + req.query("q").value_or("-"));
    });
    start(1);
    RawClient c(port_);
    std::string all;
    for (int i = 0; i < 3; ++i)
        all += "GET /item/" + std::to_string(i) + "?q=v" + std::to_string(i) +
               " HTTP/1.1\r\nHost: x\r\nX-Tag: tag" + std::to_string(i) + "\r\n\r\n";
    c.send(all);
    auto got = c.read_responses(3);
    // In request order, though they finished in reverse, each with its own request's bytes.
    size_t a = got.find("0 tag0 /item/0 v0"), b = got.find("1 tag1 /item/1 v1"),
           d = got.find("2 tag2 /item/2 v2");
    ASSERT_NE(a, std::string::npos) << got;
    ASSERT_NE(b, std::string::npos) << got;
    ASSERT_NE(d, std::string::npos) << got;
    EXPECT_LT(a, b);
    EXPECT_LT(b, d);
}

TEST_F(CoroutineTest, OnWorkersRunsOnThePoolAndResumesOnTheLoop) {
    app_.get("/work", [](Request&, Response& res) -> Task<> {
        EventLoop* before = EventLoop::current();
        auto loop_thread = std::this_thread::get_id();
        auto worker = co_await on_workers([] {
            if (EventLoop::current() != nullptr) throw std::logic_error("ran on a loop");
            return std::this_thread::get_id();
        });
        bool same_loop = EventLoop::current() == before && before != nullptr;
        bool back_on_loop = std::this_thread::get_id() == loop_thread;
        res.text(std::string(worker != loop_thread ? "pool" : "loop") + (same_loop ? " same" : "") +
                 (back_on_loop ? " back" : ""));
    });
    app_.get("/work-throws", [](Request&, Response& res) -> Task<> {
        try {
            co_await on_workers([]() -> int { throw std::invalid_argument("from the pool"); });
        } catch (const std::invalid_argument& e) {
            res.text(e.what());
        }
    });
    start();
    EXPECT_EQ(body_of(fetch("/work")), "pool same back");
    EXPECT_EQ(body_of(fetch("/work-throws")), "from the pool");
}

// Holds the pool's one worker until released.
TEST_F(CoroutineTest, AFullPoolAnswers503WithRetryAfter) {
    Gate gate;
    app_.get("/hold", [&](Request&, Response& res) -> Task<> {
        co_await on_workers([&] { gate.wait(); });
        res.text("held");
    });
    start(1, 1, 1);  // one worker, one more job may wait
    RawClient holder(port_), queued(port_);
    holder.get("/hold");
    ASSERT_TRUE(eventually([&] { return gate.inside.load() == 1; }));
    queued.get("/hold");
    ASSERT_TRUE(eventually(
        [&] { return metrics().find("\nrivet_worker_queue_depth 1\n") != std::string::npos; }));
    auto busy = fetch("/hold");
    EXPECT_TRUE(busy.starts_with("HTTP/1.1 503")) << busy;
    EXPECT_NE(busy.find("Retry-After: 7\r\n"), std::string::npos) << busy;
    gate.release();
    EXPECT_EQ(body_of(holder.read_responses(1)), "held");
    EXPECT_EQ(body_of(queued.read_responses(1)), "held");
}

TEST_F(CoroutineTest, ReadableAndWritableWaitForADescriptor) {
    int p[2];
    ASSERT_EQ(pipe2(p, O_NONBLOCK | O_CLOEXEC), 0);
    app_.get("/pipe", [&](Request&, Response& res) -> Task<> {
        co_await writable(p[1]);  // an empty pipe is writable at once
        co_await readable(p[0]);  // waits for the test's byte
        char buf[64];
        ssize_t n = read(p[0], buf, sizeof buf);
        res.text(std::string(buf, size_t(n > 0 ? n : 0)));
    });
    app_.get("/fast", [](Request&, Response& res) { res.text("fast"); });
    start(1);
    RawClient c(port_);
    c.get("/pipe");
    EXPECT_EQ(body_of(fetch("/fast")), "fast");  // the loop is free meanwhile
    ASSERT_EQ(write(p[1], "ready", 5), 5);
    EXPECT_EQ(body_of(c.read_responses(1)), "ready");
    close(p[0]);
    close(p[1]);
}

TEST_F(CoroutineTest, AClientGoingAwayDestroysTheFrameAtItsTimer) {
    std::atomic<int> destroyed{0}, after{0};
    app_.get("/sleepy", [&](Request&, Response& res) -> Task<> {
        Tracked t{&destroyed};
        co_await add_later(1, 1, 10'000);  // the timer is inside a nested task
        ++after;
        res.text("never");
    });
    start(1);
    for (bool reset : {false, true}) {
        RawClient c(port_);
        c.get("/sleepy");
        std::this_thread::sleep_for(50ms);
        c.close(reset);
    }
    ASSERT_TRUE(eventually([&] { return destroyed.load() == 2; }));
    EXPECT_EQ(after.load(), 0);
    EXPECT_NE(metrics().find("\nrivet_handlers_cancelled_total 2\n"), std::string::npos)
        << metrics();
}

TEST_F(CoroutineTest, EofWhileWaitingIsTheClientGoingAway) {
    std::atomic<int> destroyed{0};
    app_.get("/sleepy", [&](Request&, Response& res) -> Task<> {
        Tracked t{&destroyed};
        co_await sleep(10s);
        res.text("never");
    });
    start(1);
    RawClient c(port_);
    c.get("/sleepy");
    std::this_thread::sleep_for(50ms);
    c.shutdown_write();
    EXPECT_TRUE(c.wait_eof());
    EXPECT_EQ(c.received(), "");
    ASSERT_TRUE(eventually([&] { return destroyed.load() == 1; }));
}

TEST_F(CoroutineTest, ACancelledFrameWaitsForItsRunningWorkerJobThenItsResultIsDropped) {
    Gate gate;
    std::atomic<int> destroyed{0}, after{0};
    app_.get("/job", [&](Request&, Response& res) -> Task<> {
        Tracked t{&destroyed};
        std::string local = "frame data";
        // The job reads the frame: the frame must outlive it even when the client leaves.
        size_t n = co_await on_workers([&] {
            gate.wait();
            return local.size();
        });
        ++after;
        res.text(std::to_string(n));
    });
    start(1, 1);
    RawClient c(port_);
    c.get("/job");
    ASSERT_TRUE(eventually([&] { return gate.inside.load() == 1; }));
    c.close(true);
    ASSERT_TRUE(eventually([&] {
        return metrics().find("\nrivet_handlers_cancelled_total 1\n") != std::string::npos;
    }));
    std::this_thread::sleep_for(50ms);
    EXPECT_EQ(destroyed.load(), 0) << "destroyed while its job still ran";
    gate.release();
    ASSERT_TRUE(eventually([&] { return destroyed.load() == 1; }));
    EXPECT_EQ(after.load(), 0);
    EXPECT_EQ(body_of(fetch("/metrics")).empty(), false);  // the server lives on
}

TEST_F(CoroutineTest, ACompletedHandlerIsNotCancelledByALaterClose) {
    app_.get("/quick", [](Request&, Response& res) -> Task<> {
        co_await sleep(1ms);
        res.text("quick");
    });
    start(1);
    for (int i = 0; i < 10; ++i) {
        RawClient c(port_);
        c.get("/quick");
        EXPECT_EQ(body_of(c.read_responses(1)), "quick");
    }
    EXPECT_NE(metrics().find("\nrivet_handlers_cancelled_total 0\n"), std::string::npos);
}

TEST_F(CoroutineTest, AwaitingOffALoopThrows) {
    app_.get("/off", [](Request&, Response& res) -> Task<> {
        // A task run by a worker cannot wait there: it has no loop.
        std::string what = co_await on_workers([] {
            try {
                auto task = add_later(1, 2, 5);
                (void)task;  // never started: only constructing it is fine anywhere
                throw std::logic_error("constructed");
            } catch (const std::logic_error& e) {
                return std::string(e.what());
            }
        });
        res.text(what);
    });
    start(1);
    EXPECT_EQ(body_of(fetch("/off")), "constructed");
}

TEST_F(CoroutineTest, EventLoopPostAndTimersFromOutside) {
    start(2);
    ASSERT_EQ(app_.loops(), 2u);
    std::atomic<int> ran{0};
    std::atomic<bool> right_loop{true};
    for (unsigned i = 0; i < app_.loops(); ++i) {
        EventLoop* loop = &app_.loop(i);
        EXPECT_FALSE(loop->on_this_thread());
        loop->post([&, loop] {
            if (EventLoop::current() != loop || !loop->on_this_thread()) right_loop = false;
            ++ran;
        });
        loop->call_after(20ms, [&] { ++ran; });
        auto cancelled = loop->call_after(30ms, [&] { ran += 100; });
        cancelled.cancel();
    }
    ASSERT_TRUE(eventually([&] { return ran.load() == 4; }));
    std::this_thread::sleep_for(60ms);
    EXPECT_EQ(ran.load(), 4);
    EXPECT_TRUE(right_loop);
    EXPECT_EQ(EventLoop::current(), nullptr);
}

}  // namespace
}  // namespace rivet::testing

namespace rivet::testing {
namespace {

struct Who {
    std::string name;
};

TEST_F(CoroutineTest, MiddlewareRunsAroundWaitingHandlersOnTheLoop) {
    std::atomic<int> after_calls{0};
    std::atomic<bool> after_on_loop{true};
    app_.use(before([](Request& req, Response& res) {
        req.context().set(Who{"ada"});
        res.header("X-Before", "1");
        return true;
    }));
    app_.use(after([&](const Request&, Response& res) {
        if (EventLoop::current() == nullptr) after_on_loop = false;
        ++after_calls;
        res.header("X-After", std::to_string(res.status()));
    }));
    app_.get("/co", [](Request& req, Response& res) -> Task<> {
        co_await sleep(5ms);
        res.text("co " + req.context().get<Who>().name);  // the context survives the wait
    });
    app_.get("/co-fails", [](Request&, Response&) -> Task<> {
        co_await sleep(5ms);
        throw HttpError(418 + 100, "nope");
    });
    app_.get("/cb", [](Request& req, AsyncReply reply) {
        std::string who = req.context().get<Who>().name;
        std::thread([who, reply = std::move(reply)]() mutable {
            reply.send(Response(201).text("cb " + who));
        }).detach();
    });
    start(1);
    auto co = fetch("/co");
    EXPECT_EQ(body_of(co), "co ada");
    EXPECT_NE(co.find("X-Before: 1\r\n"), std::string::npos) << co;
    EXPECT_NE(co.find("X-After: 200\r\n"), std::string::npos) << co;
    auto fails = fetch("/co-fails");
    EXPECT_TRUE(fails.starts_with("HTTP/1.1 518")) << fails;
    EXPECT_NE(fails.find("X-Before: 1\r\n"), std::string::npos) << fails;  // kept by the error
    EXPECT_NE(fails.find("X-After: 518\r\n"), std::string::npos) << fails;
    auto cb = fetch("/cb");
    EXPECT_TRUE(cb.starts_with("HTTP/1.1 201")) << cb;
    EXPECT_EQ(body_of(cb), "cb ada");
    EXPECT_NE(cb.find("X-Before: 1\r\n"), std::string::npos) << cb;
    EXPECT_NE(cb.find("X-After: 201\r\n"), std::string::npos) << cb;
    EXPECT_EQ(after_calls.load(), 3);
    EXPECT_TRUE(after_on_loop);
}

}  // namespace
}  // namespace rivet::testing
