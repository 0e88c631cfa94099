// The application's say over request bodies: a body limit per request (smaller or larger than
// the server's), protocol errors shaped by the application, and the server-wide budget for
// buffered bodies.
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "engine_harness.hpp"

namespace rivet::engine::testing {
namespace {

// "/small" may send 10 bytes, "/large" 1000; the rest gets the server's max_body.
void plan_by_path(const http::RequestHead& head, BodyPlan& plan) {
    if (head.path == "/small") plan.limit = 10;
    if (head.path == "/large") plan.limit = 1000;
}

ServerConfig with_max_body(uint64_t max_body) {
    ServerConfig config;
    config.limits.max_body = max_body;
    return config;
}

TEST(EngineBodyPlan, SmallerLimitRefusesContentLengthBeforeReadingTheBody) {
    EngineHarness h(with_max_body(100), {}, plan_by_path);
    auto c = h.connect();
    c->send(request("POST", "/small", "", std::string(10, 'a')));
    auto got = c->read_responses(1);
    ASSERT_EQ(got.size(), 1u);
    EXPECT_EQ(got[0].status, 200);
    // The head alone: the 413 comes before any body byte was sent.
    c->send("POST /small HTTP/1.1\r\nHost: t\r\nContent-Length: 11\r\n\r\n");
    got = c->read_responses(2);
    ASSERT_EQ(got.size(), 2u);
    EXPECT_EQ(got[1].status, 413);
    EXPECT_EQ(got[1].field("Connection"), "close");
    EXPECT_TRUE(c->wait_eof());
    EXPECT_EQ(h.app().bodies().size(), 1u);
    EXPECT_EQ(h.app().protocol_errors(), std::vector<int>{413});
}

TEST(EngineBodyPlan, LargerLimitThanTheServersIsServed) {
    EngineHarness h(with_max_body(100), {}, plan_by_path);
    auto c = h.connect();
    std::string body(1000, 'b');
    body[500] = '!';
    c->send_in_pieces(request("POST", "/large", "", body), 300);
    auto got = c->read_responses(1);
    ASSERT_EQ(got.size(), 1u);
    EXPECT_EQ(got[0].status, 200);
    ASSERT_EQ(h.app().bodies().size(), 1u);
    EXPECT_EQ(h.app().bodies()[0], body);
    // Elsewhere the server's limit holds.
    c->send(request("POST", "/other", "", std::string(101, 'c')));
    got = c->read_responses(2);
    ASSERT_EQ(got.size(), 2u);
    EXPECT_EQ(got[1].status, 413);
}

TEST(EngineBodyPlan, ChunkedBodyIsRefusedAsSoonAsItCrossesTheLimit) {
    EngineHarness h(with_max_body(1 << 20), {}, plan_by_path);
    auto c = h.connect();
    c->send("POST /small HTTP/1.1\r\nHost: t\r\nTransfer-Encoding: chunked\r\n\r\n5\r\nhello\r\n");
    EXPECT_EQ(c->read_for(50ms), "");  // 5 of 10 bytes: still reading
    c->send("6\r\nworld!\r\n");        // 11: over, though the body has not ended
    auto got = c->read_responses(1);
    ASSERT_EQ(got.size(), 1u);
    EXPECT_EQ(got[0].status, 413);
    EXPECT_TRUE(c->wait_eof());
    EXPECT_TRUE(h.app().bodies().empty());
}

// The application's own answer to refused requests: JSON, with what it knows of the request.
void shape_as_json(const ProtocolError& e, ErrorReply& reply) {
    static thread_local std::string body;
    body = "{\"status\":" + std::to_string(e.status) + ",\"reason\":\"" + e.reason +
           "\",\"path\":\"" + (e.head ? std::string(e.head->path) : "-") + "\"}";
    ReplyView v;
    v.head.status = e.status;
    v.head.content_type = "application/json";
    v.head.body = body;
    reply.respond(v);  // says nothing of the connection: the engine closes it anyway
}

TEST(EngineBodyPlan, ProtocolErrorsAreShapedByTheApplication) {
    EngineHarness h(with_max_body(100), {}, plan_by_path, shape_as_json);
    {
        auto c = h.connect();
        c->send("POST /small HTTP/1.1\r\nHost: t\r\nContent-Length: 50\r\n\r\n");
        auto got = c->read_responses(1);
        ASSERT_EQ(got.size(), 1u);
        EXPECT_EQ(got[0].status, 413);
        EXPECT_EQ(got[0].field("Content-Type"), "application/json");
        EXPECT_EQ(got[0].body, R"({"status":413,"reason":"content too large","path":"/small"})");
        EXPECT_EQ(got[0].field("Connection"), "close");
        EXPECT_TRUE(c->wait_eof());
    }
    {
        // A 431 has no head to tell.
        auto c = h.connect();
        c->send("GET / HTTP/1.1\r\nHost: t\r\nX: " + std::string(20000, 'x') + "\r\n\r\n");
        auto got = c->read_responses(1);
        ASSERT_EQ(got.size(), 1u);
        EXPECT_EQ(got[0].status, 431);
        EXPECT_EQ(got[0].body.find(R"("path":"-")") != std::string::npos, true) << got[0].body;
        EXPECT_EQ(got[0].field("Connection"), "close");
        EXPECT_TRUE(c->wait_eof());
    }
    EXPECT_EQ(h.app().protocol_errors(), (std::vector<int>{413, 431}));  // still counted
}

TEST(EngineBodyPlan, UnshapedProtocolErrorsKeepThePlainText) {
    EngineHarness h;
    auto c = h.connect();
    c->send("BREW / HTTP/1.1\r\nHost: t\r\nTransfer-Encoding: gzip\r\n\r\n");
    auto got = c->read_responses(1);
    ASSERT_EQ(got.size(), 1u);
    EXPECT_EQ(got[0].status, 501);
    EXPECT_EQ(got[0].body, "501 Not Implemented: transfer coding not implemented\n");
}

// ---- the server-wide budget for buffered bodies ----

ServerConfig with_budget(uint64_t budget) {
    ServerConfig config;
    config.limits.max_buffered_bodies = budget;
    return config;
}

std::string numbered_body(size_t n, int seed) {
    std::string body(n, '.');
    for (size_t i = 0; i < n; i += 97) body[i] = char('A' + (seed + i) % 26);
    return body;
}

TEST(EngineBodyBudget, ReservationsFitTheLimitExceptABodyAlone) {
    BodyBudget budget(100);
    int woken = 0;
    budget.add_waker(0, [&] { ++woken; });
    EXPECT_TRUE(budget.try_take(60));
    EXPECT_FALSE(budget.try_take(41));
    EXPECT_FALSE(budget.try_take(UINT64_MAX));  // no wrap-around past the limit
    EXPECT_TRUE(budget.try_take(40));
    EXPECT_EQ(budget.held(), 100u);
    budget.want(0);
    budget.give_back(100);
    EXPECT_EQ(woken, 1);
    budget.give_back(0);
    EXPECT_EQ(woken, 1);                // once per want()
    EXPECT_TRUE(budget.try_take(500));  // alone: whatever its size
    EXPECT_FALSE(budget.try_take(1));
    budget.give_back(500);
    EXPECT_EQ(budget.peak(), 500u);
    budget.remove_waker(0);
}

TEST(EngineBodyBudget, BodiesOverTheBudgetWaitUnreadThenAllComplete) {
    constexpr size_t kBody = 100 * 1024;
    constexpr uint64_t kBudget = 250 * 1024;  // two bodies at a time
    EngineHarness h(with_budget(kBudget), [](Exchange& ex) {
        ex.respond_simple(200, std::to_string(ex.body().size()) + "\n");
    });
    constexpr int kClients = 6;
    std::vector<std::unique_ptr<Client>> clients;
    std::vector<std::string> requests;
    for (int i = 0; i < kClients; ++i) {
        clients.push_back(h.connect());
        requests.push_back(request("POST", "/up", "", numbered_body(kBody, i)));
    }
    // Every head with the start of its body: two are admitted, the others wait for the budget.
    for (int i = 0; i < kClients; ++i) clients[i]->send(requests[i].substr(0, 1000));
    ASSERT_TRUE(h.sync());
    ASSERT_TRUE(h.sync());  // the admission task
    EXPECT_EQ(h.io().stats().bodies_waiting.load(), uint64_t(kClients - 2));
    EXPECT_EQ(h.io().budget().held(), 2 * kBody);
    // The rest of every body, from threads of their own (waiting ones block on a full socket).
    std::vector<std::thread> senders;
    for (int i = 0; i < kClients; ++i)
        senders.emplace_back(
            [&, i] { clients[i]->send_in_pieces(requests[i].substr(1000), 8192); });
    for (auto& t : senders) t.join();
    for (int i = 0; i < kClients; ++i) {
        auto got = clients[i]->read_responses(1, 5000ms);
        ASSERT_EQ(got.size(), 1u) << "client " << i;
        EXPECT_EQ(got[0].body, std::to_string(kBody) + "\n");
    }
    auto bodies = h.app().bodies();
    ASSERT_EQ(bodies.size(), size_t(kClients));
    for (auto& b : bodies) {
        bool known = false;
        for (int i = 0; i < kClients; ++i) known = known || b == numbered_body(kBody, i);
        EXPECT_TRUE(known) << "a body of " << b.size() << " bytes differs from every one sent";
    }
    EXPECT_LE(h.io().budget().peak(), kBudget);
    EXPECT_EQ(h.io().budget().held(), 0u);
    EXPECT_EQ(h.io().stats().bodies_waiting.load(), 0u);
}

TEST(EngineBodyBudget, ABodyAloneIsReadEvenWhenLargerThanTheBudget) {
    EngineHarness h(with_budget(1000));
    auto c = h.connect();
    std::string body = numbered_body(50'000, 3);
    c->send_in_pieces(request("POST", "/alone", "", body), 4096);
    auto got = c->read_responses(1);
    ASSERT_EQ(got.size(), 1u);
    EXPECT_EQ(got[0].status, 200);
    ASSERT_EQ(h.app().bodies().size(), 1u);
    EXPECT_EQ(h.app().bodies()[0], body);
    EXPECT_EQ(h.io().budget().held(), 0u);
}

TEST(EngineBodyBudget, AWaitingBodyGetsItsContinueOnlyOnceAdmitted) {
    EngineHarness h(with_budget(1000));
    auto first = h.connect();
    first->send("POST /a HTTP/1.1\r\nHost: t\r\nContent-Length: 900\r\n\r\n");
    ASSERT_TRUE(h.sync());
    auto second = h.connect();
    second->send(
        "POST /b HTTP/1.1\r\nHost: t\r\nContent-Length: 900\r\nExpect: 100-continue\r\n\r\n");
    EXPECT_EQ(second->read_for(100ms), "");  // over the budget: no 100 Continue yet
    first->send(std::string(900, 'x'));
    ASSERT_EQ(first->read_responses(1).size(), 1u);
    ASSERT_TRUE(second->read_until("100 Continue"));
    second->send(std::string(900, 'y'));
    auto got = second->read_responses(2);
    ASSERT_EQ(got.size(), 2u);
    EXPECT_EQ(got[1].status, 200);
}

TEST(EngineBodyBudget, AWaitingConnectionThatClosesLeavesNothingHeld) {
    EngineHarness h(with_budget(1000));
    auto first = h.connect();
    first->send("POST /a HTTP/1.1\r\nHost: t\r\nContent-Length: 900\r\n\r\n");
    auto second = h.connect();
    second->send("POST /b HTTP/1.1\r\nHost: t\r\nContent-Length: 900\r\n\r\n");
    ASSERT_TRUE(h.sync());
    ASSERT_TRUE(h.sync());
    EXPECT_EQ(h.io().stats().bodies_waiting.load(), 1u);
    second.reset();
    first.reset();
    for (int i = 0; i < 50 && h.io().budget().held() != 0; ++i) std::this_thread::sleep_for(5ms);
    EXPECT_EQ(h.io().budget().held(), 0u);
}

}  // namespace
}  // namespace rivet::engine::testing
