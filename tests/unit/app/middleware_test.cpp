// Middleware, errors as HTTP and the request context, on a real socket: the order things run in,
// which thread runs them, and that every response (the framework's own included) passes after().
#include <rivet/cors.hpp>
#include <rivet/request_id.hpp>
#include <rivet/rivet.hpp>

#include <gtest/gtest.h>

#include <atomic>
#include <condition_variable>
#include <mutex>
#include <string>
#include <thread>

#include "raw_client.hpp"

namespace {

using rivet::Request;
using rivet::Response;
using rivet::test::exchange;

std::string get(uint16_t port, const std::string& target, const std::string& fields = "") {
    return rivet::test::exchange(port,
                                 "GET " + target + " HTTP/1.1\r\nHost: x\r\n" + fields + "\r\n");
}

// Records its name in the request's Trail on before() and adds "X-After: name" on after().
struct Trail {
    std::string names;
};
class Named final : public rivet::Middleware {
public:
    explicit Named(std::string name) : name_(std::move(name)) {}
    bool before(Request& req, Response&) override {
        auto* trail = req.context().find<Trail>();
        if (!trail) trail = &req.context().set(Trail{});
        trail->names += name_ + ";";
        return true;
    }
    void after(const Request&, Response& res) override { res.header("X-After", name_); }

private:
    std::string name_;
};

class MiddlewareTest : public ::testing::Test {
protected:
    void start(size_t queue = 1024, unsigned workers = 2) {
        rivet::RunOptions options;
        options.host = "127.0.0.1";
        options.port = 0;
        options.threads = 1;
        options.workers = workers;
        options.queue = queue;
        options.quiet = true;
        options.ops.admin.metrics = true;
        options.ops.rate_limit = rate_limit_;
        port_ = app_.start(options);
    }
    void TearDown() override { app_.stop(); }

    rivet::App app_;
    rivet::RateLimitOptions rate_limit_;
    uint16_t port_ = 0;
};

TEST_F(MiddlewareTest, BeforeInOrderAfterInReverseGroupsByPrefix) {
    app_.use(std::make_shared<Named>("a"));
    app_.use("/todos", std::make_shared<Named>("t"));
    app_.use(std::make_shared<Named>("b"));
    auto trail = [](Request& req, Response& res) { res.text(req.context().get<Trail>().names); };
    app_.get("/todos", trail);
    app_.get("/todos/:id", trail);
    app_.get("/todosx", trail);
    start();
    for (const char* path : {"/todos", "/todos/1"}) {
        auto got = get(port_, path);
        // App-wide ones first (in the order added), then the group's.
        EXPECT_TRUE(got.ends_with("\r\n\r\na;b;t;")) << got;
        EXPECT_NE(got.find("X-After: t\r\nX-After: b\r\nX-After: a\r\n"), std::string::npos) << got;
    }
    auto outside = get(port_, "/todosx");  // a prefix covers whole segments only
    EXPECT_TRUE(outside.ends_with("\r\n\r\na;b;")) << outside;
    EXPECT_EQ(outside.find("X-After: t"), std::string::npos) << outside;
}

TEST_F(MiddlewareTest, AnEarlyAnswerSkipsTheHandlerAndLaterMiddlewareButNotEarlierAfters) {
    std::atomic<int> handled{0};
    app_.use(std::make_shared<Named>("outer"));
    app_.use("/private", rivet::before([](Request& req, Response&) -> bool {
                 if (req.header("Authorization") != "Bearer good")
                     throw rivet::HttpError(401, "missing or wrong token")
                         .header("WWW-Authenticate", "Bearer");
                 return true;
             }));
    app_.use("/private", std::make_shared<Named>("inner"));
    app_.get("/private/data", [&](Request&, Response& res) {
        ++handled;
        res.text("secret");
    });
    start();
    auto refused = get(port_, "/private/data");
    EXPECT_TRUE(refused.starts_with("HTTP/1.1 401 Unauthorized\r\n")) << refused;
    EXPECT_NE(refused.find("WWW-Authenticate: Bearer\r\n"), std::string::npos) << refused;
    EXPECT_NE(refused.find("X-After: outer\r\n"), std::string::npos) << refused;
    EXPECT_EQ(refused.find("X-After: inner"), std::string::npos) << refused;
    EXPECT_TRUE(refused.ends_with(R"({"error":"missing or wrong token"})")) << refused;
    EXPECT_EQ(handled.load(), 0);
    auto allowed = get(port_, "/private/data", "Authorization: Bearer good\r\n");
    EXPECT_TRUE(allowed.ends_with("secret")) << allowed;
    EXPECT_EQ(handled.load(), 1);
}

TEST_F(MiddlewareTest, FrameworkErrorsPassAfterAndTheErrorHandler) {
    app_.use(rivet::before([](Request&, Response& res) {
        res.header("X-Kept", "1");  // set before the handler: every error answer keeps it
        return true;
    }));
    app_.use(rivet::after([](const Request&, Response& res) { res.header("X-Seen", "1"); }));
    app_.on_error([](const Request& req, Response& res, const rivet::ErrorInfo& e) {
        res.text("E " + std::to_string(e.status) + " " + std::string(e.message) + " at " +
                 std::string(req.path()));
    });
    app_.get("/thing", [](Request&, Response& res) { res.text("thing"); });
    app_.get("/throws", [](Request&, Response& res) {
        res.header("X-Dropped", "1");  // the failed handler's own fields go
        throw std::runtime_error("internal detail");
    });
    app_.get("/teapot",
             [](Request&, Response&) { throw rivet::HttpError(418, "short and stout"); });
    app_.get("/own", [](Request&, Response& res) { res.status(404).text("my own 404"); });
    app_.post("/json", [](Request& req, Response& res) { res.json(req.json()); });
    start();
    auto check = [&](const std::string& got, const std::string& status, const std::string& body) {
        EXPECT_TRUE(got.starts_with("HTTP/1.1 " + status)) << got;
        EXPECT_NE(got.find("X-Kept: 1\r\n"), std::string::npos) << got;
        EXPECT_NE(got.find("X-Seen: 1\r\n"), std::string::npos) << got;
        EXPECT_TRUE(got.ends_with(body)) << got;
    };
    check(get(port_, "/nope"), "404", "E 404 Not Found at /nope");
    auto put = exchange(port_, "PUT /thing HTTP/1.1\r\nHost: x\r\nContent-Length: 0\r\n\r\n");
    check(put, "405", "E 405 Method Not Allowed at /thing");
    EXPECT_NE(put.find("Allow: GET, HEAD, OPTIONS\r\n"), std::string::npos) << put;
    auto thrown = get(port_, "/throws");
    check(thrown, "500", "E 500 Internal Server Error at /throws");
    EXPECT_EQ(thrown.find("X-Dropped"), std::string::npos) << thrown;
    EXPECT_EQ(thrown.find("internal detail"), std::string::npos) << thrown;
    check(get(port_, "/teapot"), "418", "E 418 short and stout at /teapot");
    check(get(port_, "/own"), "404", "my own 404");  // a handler's own error is its own
    auto bad = exchange(port_,
                        "POST /json HTTP/1.1\r\nHost: x\r\nContent-Length: 13\r\n\r\n"
                        "{\"numbers\":[1");
    check(bad, "400", "");
    EXPECT_NE(bad.find("E 400 invalid JSON body: parse error at line 1, column 14"),
              std::string::npos)
        << bad;
}

TEST_F(MiddlewareTest, TheDefaultErrorBodyIsJson) {
    start();
    auto got = get(port_, "/nope");
    EXPECT_TRUE(got.starts_with("HTTP/1.1 404 Not Found\r\n")) << got;
    EXPECT_NE(got.find("Content-Type: application/json\r\n"), std::string::npos) << got;
    EXPECT_TRUE(got.ends_with(R"({"error":"Not Found"})")) << got;
}

TEST_F(MiddlewareTest, OffloadedRoutesRunMiddlewareOnTheLoopAndTheHandlerOnAWorker) {
    std::atomic<std::thread::id> before_thread, after_thread, handler_thread;
    std::atomic<int> handled{0};
    app_.use(rivet::before([&](Request& req, Response&) {
        before_thread = std::this_thread::get_id();
        if (req.has_header("X-Refuse")) throw rivet::HttpError(403, "refused");
        req.context().set(Trail{"from the loop"});
        return true;
    }));
    app_.use(rivet::after([&](const Request&, Response& res) {
        after_thread = std::this_thread::get_id();
        res.header("X-After", "1");
    }));
    app_.get("/heavy",
             [&](Request& req, Response& res) {
                 handler_thread = std::this_thread::get_id();
                 ++handled;
                 res.text(req.context().get<Trail>().names);
             })
        .offload();
    app_.get("/heavy-throws",
             [](Request&, Response&) { throw rivet::HttpError(422, "cannot do that"); })
        .offload();
    start();
    auto got = get(port_, "/heavy");
    EXPECT_TRUE(got.ends_with("from the loop")) << got;
    EXPECT_NE(got.find("X-After: 1\r\n"), std::string::npos) << got;
    EXPECT_EQ(before_thread.load(), after_thread.load());
    EXPECT_NE(before_thread.load(), handler_thread.load());
    // A refused request never takes a worker.
    auto refused = get(port_, "/heavy", "X-Refuse: 1\r\n");
    EXPECT_TRUE(refused.starts_with("HTTP/1.1 403")) << refused;
    EXPECT_EQ(handled.load(), 1);
    auto thrown = get(port_, "/heavy-throws");
    EXPECT_TRUE(thrown.starts_with("HTTP/1.1 422")) << thrown;
    EXPECT_NE(thrown.find("X-After: 1\r\n"), std::string::npos) << thrown;
    EXPECT_TRUE(thrown.ends_with(R"({"error":"cannot do that"})")) << thrown;
}

TEST_F(MiddlewareTest, AFullQueueAnswers503ThroughMiddleware) {
    std::mutex m;
    std::condition_variable cv;
    bool release = false;
    std::atomic<int> started{0};
    app_.use(rivet::after([](const Request&, Response& res) { res.header("X-After", "1"); }));
    app_.get("/block",
             [&](Request&, Response& res) {
                 ++started;
                 std::unique_lock lock(m);
                 cv.wait(lock, [&] { return release; });
                 res.text("done");
             })
        .offload();
    start(/*queue=*/1, /*workers=*/1);
    std::thread first([&] { EXPECT_TRUE(get(port_, "/block").ends_with("done")); });
    while (started.load() == 0) std::this_thread::sleep_for(std::chrono::milliseconds(1));
    std::thread queued([&] { EXPECT_TRUE(get(port_, "/block").ends_with("done")); });
    // The third is refused once the second waits in the queue.
    while (get(port_, "/metrics").find("\nrivet_worker_queue_depth 1\n") == std::string::npos)
        std::this_thread::sleep_for(std::chrono::milliseconds(1));
    auto busy = get(port_, "/block");
    EXPECT_TRUE(busy.starts_with("HTTP/1.1 503")) << busy;
    EXPECT_NE(busy.find("Retry-After: 1\r\n"), std::string::npos) << busy;
    EXPECT_NE(busy.find("X-After: 1\r\n"), std::string::npos) << busy;
    {
        std::lock_guard lock(m);
        release = true;
    }
    cv.notify_all();
    first.join();
    queued.join();
}

TEST_F(MiddlewareTest, AThrowingAfterAnswers500AndTheOthersStillRun) {
    app_.use(rivet::after([](const Request&, Response& res) { res.header("X-Outer", "1"); }));
    app_.use(rivet::after([](const Request&, Response&) { throw std::runtime_error("oops"); }));
    app_.get("/x", [](Request&, Response& res) { res.text("x"); });
    start();
    auto got = get(port_, "/x");
    EXPECT_TRUE(got.starts_with("HTTP/1.1 500")) << got;
    EXPECT_NE(got.find("X-Outer: 1\r\n"), std::string::npos) << got;
}

TEST_F(MiddlewareTest, RateLimitedRequestsPassAfter) {
    rate_limit_.enabled = true;
    rate_limit_.requests_per_second = 0.001;
    rate_limit_.burst = 1;
    app_.use(rivet::cors());
    app_.get("/x", [](Request&, Response& res) { res.text("x"); });
    start();
    EXPECT_TRUE(get(port_, "/x").starts_with("HTTP/1.1 200"));
    auto limited = get(port_, "/x", "Origin: https://a.example\r\n");
    EXPECT_TRUE(limited.starts_with("HTTP/1.1 429")) << limited;
    EXPECT_NE(limited.find("Retry-After: "), std::string::npos) << limited;
    EXPECT_NE(limited.find("Access-Control-Allow-Origin: *\r\n"), std::string::npos) << limited;
}

TEST_F(MiddlewareTest, CorsPreflightAndFieldsOnEveryResponse) {
    app_.use(rivet::cors({.allow_origins = {"https://app.example"},
                          .expose_headers = {"X-Request-Id"},
                          .allow_credentials = true}));
    app_.get("/x", [](Request&, Response& res) { res.text("x"); });
    app_.get("/boom", [](Request&, Response&) -> void { throw std::runtime_error("boom"); });
    start();
    auto pre = exchange(port_,
                        "OPTIONS /anything HTTP/1.1\r\nHost: x\r\nOrigin: https://app.example\r\n"
                        "Access-Control-Request-Method: DELETE\r\n"
                        "Access-Control-Request-Headers: authorization, content-type\r\n\r\n");
    EXPECT_TRUE(pre.starts_with("HTTP/1.1 204")) << pre;
    EXPECT_NE(pre.find("Access-Control-Allow-Origin: https://app.example\r\n"), std::string::npos);
    EXPECT_NE(pre.find("Access-Control-Allow-Credentials: true\r\n"), std::string::npos);
    EXPECT_NE(pre.find("Access-Control-Allow-Methods: GET, HEAD, POST, PUT, PATCH, DELETE"),
              std::string::npos);
    EXPECT_NE(pre.find("Access-Control-Allow-Headers: authorization, content-type\r\n"),
              std::string::npos)
        << pre;
    EXPECT_NE(pre.find("Access-Control-Max-Age: 600\r\n"), std::string::npos);
    EXPECT_EQ(pre.find("Access-Control-Allow-Origin", pre.find("Allow-Origin") + 1),
              std::string::npos)
        << "once only: " << pre;
    const std::string origin = "Origin: https://app.example\r\n";
    for (const char* path : {"/x", "/nope", "/boom"}) {
        auto got = get(port_, path, origin);
        EXPECT_NE(got.find("Access-Control-Allow-Origin: https://app.example\r\n"),
                  std::string::npos)
            << got;
        EXPECT_NE(got.find("Vary: Origin\r\n"), std::string::npos) << got;
        EXPECT_NE(got.find("Access-Control-Expose-Headers: X-Request-Id\r\n"), std::string::npos);
    }
    auto other = get(port_, "/x", "Origin: https://evil.example\r\n");
    EXPECT_EQ(other.find("Access-Control-Allow-Origin"), std::string::npos) << other;
    EXPECT_THROW(rivet::cors({.allow_origins = {"https://a\r\nX: y"}}), std::invalid_argument);
}

TEST_F(MiddlewareTest, RequestIdIsMadeKeptFromAProxyAndInTheContext) {
    app_.use(rivet::request_id());
    app_.get("/id", [](Request& req, Response& res) {
        res.text(req.context().get<rivet::RequestId>().value);
    });
    start();
    auto id_of = [](const std::string& got) {
        auto at = got.find("X-Request-Id: ");
        return at == std::string::npos ? "" : got.substr(at + 14, got.find("\r\n", at) - at - 14);
    };
    auto one = get(port_, "/id"), two = get(port_, "/id");
    EXPECT_FALSE(id_of(one).empty()) << one;
    EXPECT_TRUE(one.ends_with(id_of(one))) << one;  // the handler saw the same id
    EXPECT_NE(id_of(one), id_of(two));
    EXPECT_EQ(id_of(get(port_, "/id", "X-Request-Id: abc-123\r\n")), "abc-123");
    const std::string longest(128, 'a');  // the longest id taken from a proxy; one more is not
    EXPECT_EQ(id_of(get(port_, "/id", "X-Request-Id: " + longest + "\r\n")), longest);
    auto too_long = id_of(get(port_, "/id", "X-Request-Id: " + longest + "a\r\n"));
    EXPECT_FALSE(too_long.empty());
    EXPECT_NE(too_long, longest + "a");
    auto forged = get(port_, "/id", "X-Request-Id: <script>\r\n");
    EXPECT_NE(id_of(forged), "<script>");
    EXPECT_FALSE(id_of(forged).empty());
    EXPECT_FALSE(id_of(get(port_, "/nope")).empty());  // errors carry it too
}

TEST(Middleware, BadRegistrationsAreRefused) {
    rivet::App app;
    EXPECT_THROW(app.use("no-slash", rivet::cors()), std::invalid_argument);
    EXPECT_THROW(app.use(nullptr), std::invalid_argument);
    EXPECT_THROW(rivet::HttpError(200, "fine"), std::invalid_argument);
    EXPECT_THROW(rivet::request_id({.header = "Bad Name"}), std::invalid_argument);
    // The per-request slice is a fixed array: one middleware past it is refused when added.
    rivet::App full;
    for (size_t i = 0; i < 32; ++i) full.use(rivet::after([](const Request&, Response&) {}));
    EXPECT_THROW(full.use("/x", rivet::cors()), std::invalid_argument);
}

}  // namespace
