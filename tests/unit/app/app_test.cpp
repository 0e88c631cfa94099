// The framework API end to end: an App on a real socket, spoken to with raw HTTP/1.1.
#include <rivet/rivet.hpp>

#include <arpa/inet.h>
#include <gtest/gtest.h>
#include <netinet/in.h>
#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <atomic>
#include <chrono>
#include <cstdlib>
#include <stdexcept>
#include <string>
#include <thread>

#include "raw_client.hpp"

namespace {

using rivet::test::exchange;

// An ephemeral port of 127.0.0.1, no listening line.
rivet::RunOptions local_options(unsigned threads, unsigned workers) {
    rivet::RunOptions options;
    options.host = "127.0.0.1";
    options.port = 0;
    options.threads = threads;
    options.workers = workers;
    options.quiet = true;
    return options;
}

class AppTest : public ::testing::Test {
protected:
    void start(unsigned threads = 2, bool metrics = false) {
        rivet::RunOptions options = local_options(threads, 2);
        options.ops.admin.metrics = metrics;
        port_ = app_.start(options);
    }
    void TearDown() override { app_.stop(); }

    rivet::App app_;
    uint16_t port_ = 0;
};

TEST_F(AppTest, ParamsWildcardAndJson) {
    app_.get("/users/:id/files/*path", [](rivet::Request& req, rivet::Response& res) {
        res.json({{"id", req.param("id")}, {"path", req.param("path")}});
    });
    start();
    auto got = exchange(port_, "GET /users/42/files/a/b.txt HTTP/1.1\r\nHost: x\r\n\r\n");
    EXPECT_NE(got.find("Content-Type: application/json"), std::string::npos) << got;
    EXPECT_NE(got.find(R"({"id":"42","path":"a/b.txt"})"), std::string::npos) << got;
}

TEST_F(AppTest, NotFoundMethodNotAllowedOptionsHead) {
    app_.get("/thing", [](rivet::Request&, rivet::Response& res) { res.text("thing"); });
    app_.post("/thing", [](rivet::Request&, rivet::Response& res) { res.text("posted"); });
    start();
    EXPECT_TRUE(exchange(port_, "GET /nope HTTP/1.1\r\nHost: x\r\n\r\n")
                    .starts_with("HTTP/1.1 404 Not Found\r\n"));
    auto put = exchange(port_, "PUT /thing HTTP/1.1\r\nHost: x\r\nContent-Length: 0\r\n\r\n");
    EXPECT_TRUE(put.starts_with("HTTP/1.1 405 Method Not Allowed\r\n")) << put;
    EXPECT_NE(put.find("Allow: GET, HEAD, POST, OPTIONS\r\n"), std::string::npos) << put;
    auto options = exchange(port_, "OPTIONS /thing HTTP/1.1\r\nHost: x\r\n\r\n");
    EXPECT_TRUE(options.starts_with("HTTP/1.1 204 No Content\r\n")) << options;
    EXPECT_NE(options.find("Allow: GET, HEAD, POST, OPTIONS\r\n"), std::string::npos);
    // A HEAD answer announces a length it does not send: read it until the close.
    auto head = exchange(port_, "HEAD /thing HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n", 0);
    EXPECT_NE(head.find("Content-Length: 5\r\n"), std::string::npos) << head;
    EXPECT_TRUE(head.ends_with("\r\n\r\n")) << head;  // no body
}

TEST_F(AppTest, ThrowingHandlerAnswers500AndServerLives) {
    app_.get("/boom",
             [](rivet::Request&, rivet::Response&) -> void { throw std::runtime_error("boom"); });
    app_.get("/boom-offloaded",
             [](rivet::Request&, rivet::Response&) -> void { throw std::runtime_error("boom"); })
        .offload();
    app_.get("/boom-int", [](rivet::Request&, rivet::Response&) -> void { throw 42; }).offload();
    app_.get("/boom-int-inline", [](rivet::Request&, rivet::Response&) -> void { throw 42; });
    app_.get("/ok", [](rivet::Request&, rivet::Response& res) { res.text("ok"); });
    start(2, true);
    EXPECT_TRUE(
        exchange(port_, "GET /boom-int HTTP/1.1\r\nHost: x\r\n\r\n").starts_with("HTTP/1.1 500"));
    // Not a std::exception, on the loop: answered 500, and counted like every other throw.
    EXPECT_TRUE(exchange(port_, "GET /boom-int-inline HTTP/1.1\r\nHost: x\r\n\r\n")
                    .starts_with("HTTP/1.1 500"));
    auto got = exchange(port_,
                        "GET /boom HTTP/1.1\r\nHost: x\r\n\r\n"
                        "GET /boom-offloaded HTTP/1.1\r\nHost: x\r\n\r\n"
                        "GET /ok HTTP/1.1\r\nHost: x\r\n\r\n",
                        3);
    size_t first = got.find("HTTP/1.1 500");
    size_t second = got.find("HTTP/1.1 500", first + 1);
    size_t ok = got.find("HTTP/1.1 200");
    ASSERT_NE(first, std::string::npos) << got;
    ASSERT_NE(second, std::string::npos) << got;
    ASSERT_NE(ok, std::string::npos) << got;
    EXPECT_LT(second, ok);  // in order
    auto metrics = exchange(port_, "GET /metrics HTTP/1.1\r\nHost: x\r\n\r\n");
    EXPECT_NE(metrics.find("\nrivet_handler_exceptions_total 4\n"), std::string::npos) << metrics;
}

TEST_F(AppTest, OffloadedRunsOffTheLoopAndKeepsOrder) {
    std::atomic<std::thread::id> worker_thread;
    app_.get("/slow",
             [&](rivet::Request& req, rivet::Response& res) {
                 worker_thread = std::this_thread::get_id();
                 std::this_thread::sleep_for(std::chrono::milliseconds(50));
                 res.text("slow " + std::string(req.query("i").value_or("?")));
             })
        .offload();
    app_.get("/fast", [](rivet::Request& req, rivet::Response& res) {
        res.text("fast " + std::string(req.query("i").value_or("?")));
    });
    start();
    std::string pipeline;
    for (int i = 0; i < 6; ++i)
        pipeline += "GET /" + std::string(i % 2 ? "fast" : "slow") + "?i=" + std::to_string(i) +
                    " HTTP/1.1\r\nHost: x\r\n\r\n";
    auto got = exchange(port_, pipeline, 6);
    size_t pos = 0;
    for (int i = 0; i < 6; ++i) {
        std::string want = std::string(i % 2 ? "fast " : "slow ") + std::to_string(i);
        size_t at = got.find(want, pos);
        ASSERT_NE(at, std::string::npos) << "response " << i << " missing or out of order\n" << got;
        pos = at;
    }
    EXPECT_NE(worker_thread.load(), std::this_thread::get_id());
}

TEST_F(AppTest, StreamedBodyIsChunkedAndComplete) {
    app_.get("/count", [](rivet::Request&, rivet::Response& res) {
        auto next = std::make_shared<int>(0);
        res.stream(
            [next](std::string& out) {
                out = "line " + std::to_string(*next) + "\n";
                return ++*next < 1000;
            },
            "text/plain");
    });
    app_.get("/after", [](rivet::Request&, rivet::Response& res) { res.text("after"); });
    start();
    auto got = exchange(
        port_, "GET /count HTTP/1.1\r\nHost: x\r\n\r\nGET /after HTTP/1.1\r\nHost: x\r\n\r\n", 2);
    EXPECT_NE(got.find("Transfer-Encoding: chunked\r\n"), std::string::npos);
    EXPECT_NE(got.find("line 0\n"), std::string::npos);
    size_t last = got.find("line 999\n");
    size_t after = got.find("\r\n\r\nafter");
    ASSERT_NE(last, std::string::npos);
    ASSERT_NE(after, std::string::npos) << "the pipelined request after the stream was lost";
    EXPECT_LT(last, after);
    // HTTP/1.0 has no chunked coding: the body ends with the connection.
    auto old = exchange(port_, "GET /count HTTP/1.0\r\n\r\n", 1);
    EXPECT_EQ(old.find("Transfer-Encoding"), std::string::npos);
    EXPECT_NE(old.find("Connection: close"), std::string::npos);
    EXPECT_NE(old.find("line 999\n"), std::string::npos);
}

TEST_F(AppTest, AnEndlessStreamDoesNotHoldItsLoop) {
    // The producer is slower than its reader, so the socket never fills and send() never says
    // EAGAIN: only the per-turn cap lets the one loop serve another connection.
    app_.get("/endless", [](rivet::Request&, rivet::Response& res) {
        res.stream(
            [](std::string& out) {
                auto until = std::chrono::steady_clock::now() + std::chrono::microseconds(20);
                while (std::chrono::steady_clock::now() < until) {
                }
                out.assign(1024, 'x');
                return true;
            },
            "application/octet-stream");
    });
    app_.get("/hello", [](rivet::Request&, rivet::Response& res) { res.text("hello"); });
    start(1);
    int fd = socket(AF_INET, SOCK_STREAM, 0);
    sockaddr_in addr{};
    addr.sin_family = AF_INET;
    addr.sin_port = htons(port_);
    addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    ASSERT_EQ(connect(fd, reinterpret_cast<sockaddr*>(&addr), sizeof addr), 0);
    std::string request = "GET /endless HTTP/1.1\r\nHost: x\r\n\r\n";
    send(fd, request.data(), request.size(), MSG_NOSIGNAL);
    std::atomic<size_t> received{0};
    std::thread reader([&] {
        char buf[65536];
        for (;;) {
            ssize_t n = recv(fd, buf, sizeof buf, 0);
            if (n <= 0) return;
            received += size_t(n);
        }
    });
    for (int i = 0; i < 500 && received < (1u << 20); ++i)
        std::this_thread::sleep_for(std::chrono::milliseconds(10));
    EXPECT_GE(received.load(), 1u << 20) << "the stream did not flow";
    auto got = exchange(port_, "GET /hello HTTP/1.1\r\nHost: x\r\n\r\n");
    EXPECT_TRUE(got.ends_with("\r\n\r\nhello")) << "the stream held the loop: " << got;
    shutdown(fd, SHUT_RDWR);  // the stream then fails to send and its connection closes
    reader.join();
    close(fd);
}

TEST_F(AppTest, FileBodiesGoOutWithSendfileInOrder) {
    // 3 MiB of a known pattern: more than one sendfile piece and more than a socket buffer.
    char path[] = "/tmp/rivet-app-test-XXXXXX";
    int fd = mkstemp(path);
    ASSERT_GE(fd, 0);
    std::string content(3 << 20, '\0');
    for (size_t i = 0; i < content.size(); ++i) content[i] = char('a' + i * 7 % 26);
    ASSERT_EQ(write(fd, content.data(), content.size()), ssize_t(content.size()));
    unlink(path);
    auto file = std::make_shared<const rivet::OpenFile>(fd);
    app_.get("/file", [file, &content](rivet::Request& req, rivet::Response& res) {
        uint64_t offset = std::stoul(std::string(req.query("offset").value_or("0")));
        res.file({file, offset, content.size() - offset}, "application/octet-stream");
    });
    app_.get("/after", [](rivet::Request&, rivet::Response& res) { res.text("after"); });
    start();
    auto got = exchange(port_,
                        "GET /file HTTP/1.1\r\nHost: x\r\n\r\n"
                        "GET /file?offset=1000 HTTP/1.1\r\nHost: x\r\n\r\n"
                        "HEAD /file HTTP/1.1\r\nHost: x\r\n\r\n"
                        "GET /after HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n",
                        0);
    size_t first = got.find("\r\n\r\n") + 4;
    ASSERT_EQ(got.compare(first, content.size(), content), 0) << "first body differs";
    size_t second_head = first + content.size();
    size_t second = got.find("\r\n\r\n", second_head) + 4;
    EXPECT_NE(got.substr(second_head, second - second_head).find("Content-Length: 3144728"),
              std::string::npos);
    ASSERT_EQ(got.compare(second, content.size() - 1000, content, 1000), 0);
    size_t head_answer = second + content.size() - 1000;
    size_t head_end = got.find("\r\n\r\n", head_answer) + 4;
    EXPECT_NE(got.substr(head_answer, head_end - head_answer).find("Content-Length: 3145728"),
              std::string::npos);
    EXPECT_EQ(got.substr(head_end, 17), "HTTP/1.1 200 OK\r\n");  // HEAD sent no body
    EXPECT_TRUE(got.ends_with("\r\n\r\nafter"));
}

TEST_F(AppTest, RoutesCannotChangeWhileRunning) {
    start();
    EXPECT_THROW(app_.get("/late", [](rivet::Request&, rivet::Response&) {}), std::logic_error);
    EXPECT_THROW(start(), std::logic_error);
}

TEST(App, BadPatternsAreRefused) {
    rivet::App app;
    EXPECT_THROW(app.get("no-slash", [](rivet::Request&, rivet::Response&) {}),
                 std::invalid_argument);
    app.get("/a", [](rivet::Request&, rivet::Response&) {});
    EXPECT_THROW(app.get("/a", [](rivet::Request&, rivet::Response&) {}), std::invalid_argument);
}

// RunOptions::on_bound (where rivet --user drops root) comes after binding and before any loop
// serves: a request that reaches the port meanwhile waits in the backlog and is answered after
// it (issue 26, item 16: the drop came with the loops already serving).
TEST(App, OnBoundComesBeforeAnyLoopServes) {
    rivet::App app;
    std::atomic<bool> bound_returned{false};
    std::atomic<bool> served_after_bound{false};
    app.get("/first", [&](rivet::Request&, rivet::Response& res) {
        served_after_bound = bound_returned.load();
        res.text("first");
    });
    rivet::RunOptions options = local_options(2, 1);
    int client = -1;
    options.on_bound = [&] {
        sockaddr_in addr{};
        socklen_t len = sizeof addr;
        ASSERT_EQ(getsockname(app.listening_fds().at(0), reinterpret_cast<sockaddr*>(&addr), &len),
                  0);
        client = socket(AF_INET, SOCK_STREAM, 0);
        ASSERT_EQ(connect(client, reinterpret_cast<sockaddr*>(&addr), len), 0);  // the backlog
        const std::string request = "GET /first HTTP/1.1\r\nHost: x\r\n\r\n";
        ASSERT_EQ(send(client, request.data(), request.size(), 0), ssize_t(request.size()));
        pollfd answer{client, POLLIN, 0};
        EXPECT_EQ(poll(&answer, 1, 100), 0) << "answered before on_bound returned";
        bound_returned = true;
    };
    app.start(options);
    ASSERT_GE(client, 0);
    timeval patience{30, 0};
    setsockopt(client, SOL_SOCKET, SO_RCVTIMEO, &patience, sizeof patience);
    char buf[512];
    const ssize_t n = recv(client, buf, sizeof buf, 0);
    close(client);
    app.stop();
    ASSERT_GT(n, 0);
    EXPECT_TRUE(std::string(buf, size_t(n)).starts_with("HTTP/1.1 200 OK\r\n"));
    EXPECT_TRUE(served_after_bound);
}

// An on_bound that throws (a user that cannot be become) stops the start: the port is let go.
TEST(App, AThrowingOnBoundClosesThePort) {
    rivet::App app;
    app.get("/x", [](rivet::Request&, rivet::Response& res) { res.text("x"); });
    rivet::RunOptions options = local_options(1, 1);
    sockaddr_in addr{};
    options.on_bound = [&] {
        socklen_t len = sizeof addr;
        getsockname(app.listening_fds().at(0), reinterpret_cast<sockaddr*>(&addr), &len);
        throw std::runtime_error("no such user");
    };
    EXPECT_THROW(app.start(options), std::runtime_error);
    const int client = socket(AF_INET, SOCK_STREAM, 0);
    EXPECT_NE(connect(client, reinterpret_cast<sockaddr*>(&addr), sizeof addr), 0);
    close(client);
}

}  // namespace
