// The callback form of a waiting handler (rivet::AsyncReply) on a real App.
#include <gtest/gtest.h>

#include <atomic>
#include <mutex>
#include <vector>

#include "coroutine_test_support.hpp"

namespace rivet::testing {
namespace {

using AsyncReplyTest = WaitingAppTest;

TEST_F(AsyncReplyTest, SentFromAnotherThreadWithTheRequestItKept) {
    app_.get("/thread/:id", [](Request& req, AsyncReply reply) {
        std::thread([&req, reply = std::move(reply)]() mutable {
            std::this_thread::sleep_for(20ms);
            Response res;
            // The request handed to this form owns its bytes: valid as long as the reply.
            res.text(std::string(req.param("id")) + " " + std::string(reply.request().path()));
            reply.send(std::move(res));
        }).detach();
    });
    start();
    EXPECT_EQ(body_of(fetch("/thread/7")), "7 /thread/7");
}

TEST_F(AsyncReplyTest, DroppedWithoutSendingAnswers500AndASecondSendThrows) {
    std::atomic<int> second_send_threw{0};
    app_.get("/drop", [](Request&, AsyncReply) {});
    app_.get("/twice", [&](Request&, AsyncReply reply) {
        reply.send(Response(200).text("first"));
        try {
            reply.send(Response(200).text("second"));
        } catch (const std::logic_error&) {
            ++second_send_threw;
        }
    });
    app_.get("/throws", [](Request&, AsyncReply) { throw HttpError(422, "no such thing"); });
    start();
    EXPECT_TRUE(fetch("/drop").starts_with("HTTP/1.1 500")) << fetch("/drop");
    EXPECT_EQ(body_of(fetch("/twice")), "first");
    EXPECT_EQ(second_send_threw.load(), 1);
    auto thrown = fetch("/throws");
    EXPECT_TRUE(thrown.starts_with("HTTP/1.1 422")) << thrown;
}

TEST_F(AsyncReplyTest, AnswersLeaveInRequestOrder) {
    app_.get("/after/:ms", [](Request& req, AsyncReply reply) {
        int ms = std::stoi(std::string(req.param("ms")));
        auto r = std::make_shared<AsyncReply>(std::move(reply));
        EventLoop::current()->call_after(std::chrono::milliseconds(ms), [r, ms] {
            r->send(Response(200).text(std::to_string(ms)));
        });
    });
    start(1);
    RawClient c(port_);
    c.send("GET /after/40 HTTP/1.1\r\nHost: x\r\n\r\nGET /after/1 HTTP/1.1\r\nHost: x\r\n\r\n");
    auto got = c.read_responses(2);
    size_t first = got.find("\r\n\r\n40"), second = got.find("\r\n\r\n1");
    ASSERT_NE(first, std::string::npos) << got;
    ASSERT_NE(second, std::string::npos) << got;
    EXPECT_LT(first, second);
}

TEST_F(AsyncReplyTest, CancelHookRunsOnTheLoopOnceAndASendAfterGoesNowhere) {
    std::mutex mu;
    std::vector<std::shared_ptr<AsyncReply>> kept;
    std::atomic<int> hooks{0};
    std::atomic<bool> hook_on_loop{true};
    app_.get("/wait", [&](Request&, AsyncReply reply) {
        auto r = std::make_shared<AsyncReply>(std::move(reply));
        EventLoop* loop = EventLoop::current();
        r->on_cancel([&, loop] {
            if (EventLoop::current() != loop) hook_on_loop = false;
            ++hooks;
        });
        std::lock_guard lock(mu);
        kept.push_back(r);
    });
    start(1);
    {
        RawClient c(port_);
        c.get("/wait");
        ASSERT_TRUE(eventually([&] {
            std::lock_guard lock(mu);
            return kept.size() == 1;
        }));
        c.close(true);
    }
    ASSERT_TRUE(eventually([&] { return hooks.load() == 1; }));
    EXPECT_TRUE(hook_on_loop);
    std::shared_ptr<AsyncReply> r;
    {
        std::lock_guard lock(mu);
        r = kept[0];
    }
    EXPECT_TRUE(r->cancelled());
    r->send(Response(200).text("too late"));  // harmless
    // A hook added after the cancel still runs, on the loop.
    std::atomic<int> late{0};
    r->on_cancel([&] { ++late; });
    ASSERT_TRUE(eventually([&] { return late.load() == 1; }));
    EXPECT_EQ(hooks.load(), 1);
    EXPECT_NE(metrics().find("\nrivet_handlers_cancelled_total 1\n"), std::string::npos);
    std::lock_guard lock(mu);
    kept.clear();
}

TEST_F(AsyncReplyTest, ASentReplyIsNeverCancelled) {
    std::atomic<int> hooks{0};
    app_.get("/now", [&](Request&, AsyncReply reply) {
        reply.on_cancel([&] { ++hooks; });
        reply.send(Response(200).text("now"));
    });
    start(1);
    for (int i = 0; i < 5; ++i) {
        RawClient c(port_);
        c.get("/now");
        c.close(true);  // maybe before the answer left: it was sent, so no cancel
    }
    EXPECT_EQ(body_of(fetch("/now")), "now");
    std::this_thread::sleep_for(50ms);
    EXPECT_EQ(hooks.load(), 0);
}

}  // namespace
}  // namespace rivet::testing
