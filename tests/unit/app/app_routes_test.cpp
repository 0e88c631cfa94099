// App route options end to end on a real socket: constrained parameters (404 and 405 included)
// and the priority of offloaded routes in the worker pool's queue.
#include <rivet/rivet.hpp>

#include <gtest/gtest.h>

#include <chrono>
#include <cstdint>
#include <future>
#include <mutex>
#include <string>
#include <thread>
#include <utility>
#include <vector>

#include "raw_client.hpp"

namespace {

using rivet::test::exchange;

}  // namespace

TEST(AppRoutes, ConstrainedParametersOnARealSocket) {
    rivet::App app;
    app.get("/items/:id<int>", [](rivet::Request& req, rivet::Response& res) {
        res.text("item " + std::to_string(*req.param_as<int64_t>("id") + 1));
    });
    app.del("/items/:id<int>", [](rivet::Request&, rivet::Response& res) { res.status(204); });
    app.get("/skus/:sku([A-Z]{3}-\\d+)",
            [](rivet::Request& req, rivet::Response& res) {
                res.text("sku " + std::string(req.param("sku")));
            })
        .offload();
    const uint16_t port = app.start(rivet::test::local_server(2));
    auto get = [&](const std::string& path) {
        return rivet::test::exchange(port, "GET " + path + " HTTP/1.1\r\nHost: x\r\n\r\n");
    };
    auto item = get("/items/-42");
    EXPECT_TRUE(item.starts_with("HTTP/1.1 200")) << item;
    EXPECT_TRUE(item.ends_with("\r\n\r\nitem -41")) << item;
    EXPECT_TRUE(get("/items/abc").starts_with("HTTP/1.1 404")) << get("/items/abc");
    EXPECT_TRUE(get("/items/99999999999999999999").starts_with("HTTP/1.1 404"));  // not an int64
    auto sku = get("/skus/ABC-123");
    EXPECT_TRUE(sku.ends_with("\r\n\r\nsku ABC-123")) << sku;
    EXPECT_TRUE(get("/skus/abc-123").starts_with("HTTP/1.1 404"));
    // 405 lists the methods of the branch the segment satisfies.
    auto put = exchange(port, "PUT /items/7 HTTP/1.1\r\nHost: x\r\nContent-Length: 0\r\n\r\n");
    EXPECT_TRUE(put.starts_with("HTTP/1.1 405")) << put;
    EXPECT_NE(put.find("Allow: GET, HEAD, DELETE, OPTIONS\r\n"), std::string::npos) << put;
    auto put_bad = exchange(port, "PUT /items/x HTTP/1.1\r\nHost: x\r\nContent-Length: 0\r\n\r\n");
    EXPECT_TRUE(put_bad.starts_with("HTTP/1.1 404")) << put_bad;
}

TEST(AppRoutes, HighPriorityJumpsTheQueueAndKeepsItsShare) {
    // One worker held by the first /slow; a queue of 3, and one more place for High requests.
    // Opens however the test ends, before the App (declared after it) waits for its jobs.
    struct Gate {
        std::promise<void> promise;
        std::shared_future<void> opened = promise.get_future().share();
        bool open = false;
        void release() {
            if (!std::exchange(open, true)) promise.set_value();
        }
        ~Gate() { release(); }
    } gate;
    std::shared_future<void> opened = gate.opened;
    rivet::App app;
    std::mutex m;
    std::vector<std::string> order;  // handlers, in the order they started
    auto record = [&](const char* name) {
        std::lock_guard lock(m);
        order.push_back(name);
    };
    app.get("/slow",
            [&, opened](rivet::Request&, rivet::Response& res) {
                record("slow");
                opened.wait();
                res.text("slow");
            })
        .offload();
    app.get("/urgent",
            [&](rivet::Request&, rivet::Response& res) {
                record("urgent");
                res.text("urgent");
            })
        .offload()
        .priority(rivet::Priority::High);
    rivet::RunOptions o = rivet::test::local_server(2);
    o.workers = 1;
    o.queue = 3;
    o.ops.admin.metrics = true;
    const uint16_t port = app.start(o);
    auto get = [port](std::string path) {
        return std::async(std::launch::async, [port, path] {
            return rivet::test::exchange(port, "GET " + path + " HTTP/1.1\r\nHost: x\r\n\r\n");
        });
    };
    auto queue_depth_is = [port](int n) {
        const std::string want = "\nrivet_worker_queue_depth " + std::to_string(n) + "\n";
        for (int i = 0; i < 500; ++i) {  // 5 s at most
            if (rivet::test::exchange(port, "GET /metrics HTTP/1.1\r\nHost: x\r\n\r\n")
                    .find(want) != std::string::npos)
                return true;
            std::this_thread::sleep_for(std::chrono::milliseconds(10));
        }
        return false;
    };
    std::vector<std::future<std::string>> slow;
    slow.push_back(get("/slow"));
    auto started = [&] {
        std::lock_guard lock(m);
        return order.size();
    };
    for (int i = 0; i < 500 && started() == 0; ++i)
        std::this_thread::sleep_for(std::chrono::milliseconds(10));
    ASSERT_EQ(started(), 1u);  // the worker is busy
    for (int i = 0; i < 3; ++i) slow.push_back(get("/slow"));
    ASSERT_TRUE(queue_depth_is(3));  // Normal is at the bound
    EXPECT_TRUE(get("/slow").get().starts_with("HTTP/1.1 503")) << "Normal past the bound";
    auto urgent = get("/urgent");
    ASSERT_TRUE(queue_depth_is(4));  // High past it
    gate.release();
    EXPECT_TRUE(urgent.get().ends_with("\r\n\r\nurgent"));
    for (auto& f : slow) EXPECT_TRUE(f.get().ends_with("\r\n\r\nslow"));
    app.stop();
    std::lock_guard lock(m);
    EXPECT_EQ(order, (std::vector<std::string>{"slow", "urgent", "slow", "slow", "slow"}));
}
