// Requests refused before routing (too large, malformed) and a route's own body limit: their
// answers pass the error handler and every app-wide middleware's after(), like the App's own.
#include <rivet/cors.hpp>
#include <rivet/request_id.hpp>
#include <rivet/rivet.hpp>

#include <gtest/gtest.h>

#include <string>

#include "raw_client.hpp"

namespace {

using rivet::Request;
using rivet::Response;

std::string post(uint16_t port, const std::string& path, size_t bytes,
                 const std::string& fields = "") {
    return rivet::test::exchange(
        port, "POST " + path + " HTTP/1.1\r\nHost: x\r\nContent-Length: " + std::to_string(bytes) +
                  "\r\n" + fields + "\r\n" + std::string(bytes, 'b'));
}

// The error handler a service writes to quote the request id in every error body.
void error_with_request_id(const Request& req, Response& res, const rivet::ErrorInfo& e) {
    const auto* id = req.context().find<rivet::RequestId>();
    res.json({{"error", e.message}, {"request_id", id ? id->value : "(none)"}});
}

// The X-Request-Id field of a raw answer, and the id its body quotes: the same one.
void expect_the_body_quotes_the_id(const std::string& got) {
    const std::string field = "X-Request-Id: ";
    size_t at = got.find(field);
    ASSERT_NE(at, std::string::npos) << got;
    std::string id = got.substr(at + field.size(), got.find("\r\n", at) - at - field.size());
    EXPECT_FALSE(id.empty()) << got;
    EXPECT_NE(got.find("\"request_id\":\"" + id + "\""), std::string::npos) << got;
}

class RefusalTest : public ::testing::Test {
protected:
    void SetUp() override {
        app_.use(rivet::cors());
        app_.use(rivet::request_id());
        app_.on_error(error_with_request_id);
        auto size = [](Request& req, Response& res) {
            res.text(std::to_string(req.body().size()));
        };
        app_.post("/small", size).max_body(10);
        app_.post("/large", size).max_body(100'000);
        app_.post("/default", size);
        rivet::RunOptions options = rivet::test::local_server();
        options.limits.max_body = 1000;
        options.limits.max_header_bytes = 4096;
        port_ = app_.start(options);
    }
    void TearDown() override { app_.stop(); }

    rivet::App app_;
    uint16_t port_ = 0;
};

TEST_F(RefusalTest, ARoutesBodyLimitIsItsOwnAndItsRefusalIsShaped) {
    const std::string origin = "Origin: https://a.example\r\n";
    EXPECT_TRUE(post(port_, "/small", 10).ends_with("\r\n\r\n10"));
    auto refused = post(port_, "/small", 11, origin);
    EXPECT_TRUE(refused.starts_with("HTTP/1.1 413")) << refused;
    EXPECT_NE(refused.find("Content-Type: application/json\r\n"), std::string::npos) << refused;
    EXPECT_NE(refused.find("Access-Control-Allow-Origin: *\r\n"), std::string::npos) << refused;
    EXPECT_NE(refused.find("X-Request-Id: "), std::string::npos) << refused;
    EXPECT_NE(refused.find("Connection: close\r\n"), std::string::npos) << refused;
    EXPECT_NE(refused.find(R"({"error":")"), std::string::npos) << refused;
    // Larger than the server's 1000 bytes: allowed on /large only.
    EXPECT_TRUE(post(port_, "/large", 50'000).ends_with("\r\n\r\n50000"));
    EXPECT_TRUE(post(port_, "/default", 1000).ends_with("\r\n\r\n1000"));
    EXPECT_TRUE(post(port_, "/default", 1001).starts_with("HTTP/1.1 413"));
    EXPECT_TRUE(post(port_, "/large", 100'001).starts_with("HTTP/1.1 413"));
}

TEST_F(RefusalTest, AHeadTooLargeIsAnsweredThroughTheAppWideMiddleware) {
    auto got = rivet::test::exchange(
        port_, "GET /x HTTP/1.1\r\nHost: x\r\nX-Big: " + std::string(8000, 'a') + "\r\n\r\n");
    EXPECT_TRUE(got.starts_with("HTTP/1.1 431")) << got.substr(0, 300);
    EXPECT_NE(got.find("X-Request-Id: "), std::string::npos) << got;  // made, no before() ran
    EXPECT_NE(got.find("Content-Type: application/json\r\n"), std::string::npos) << got;
    auto garbage = rivet::test::exchange(port_, "GET /x HTTP/1.1\r\nBad Field: y\r\n\r\n");
    EXPECT_TRUE(garbage.starts_with("HTTP/1.1 400")) << garbage;
    EXPECT_NE(garbage.find("X-Request-Id: "), std::string::npos) << garbage;
}

TEST_F(RefusalTest, TheErrorHandlerFindsTheRequestIdOfARequestRefusedBeforeRouting) {
    expect_the_body_quotes_the_id(post(port_, "/default", 1001));  // 413 before routing
    expect_the_body_quotes_the_id(post(port_, "/small", 11));      // a route's own limit
    expect_the_body_quotes_the_id(rivet::test::exchange(
        port_, "GET /x HTTP/1.1\r\nHost: x\r\nX-Big: " + std::string(8000, 'a') + "\r\n\r\n"));
    expect_the_body_quotes_the_id(
        rivet::test::exchange(port_, "GET /x HTTP/1.1\r\nBad Field: y\r\n\r\n"));
    // As for a routed request's error, a proxy's id is quoted as it came.
    auto kept = post(port_, "/default", 1001, "X-Request-Id: from-the-proxy.1\r\n");
    EXPECT_NE(kept.find(R"("request_id":"from-the-proxy.1")"), std::string::npos) << kept;
    // And a routed error, for comparison: before() made the id.
    expect_the_body_quotes_the_id(
        rivet::test::exchange(port_, "GET /nope HTTP/1.1\r\nHost: x\r\n\r\n"));
}

TEST(Refusal, ARateLimitedRequestsErrorBodyCarriesItsRequestId) {
    rivet::App app;
    app.use(rivet::request_id());
    app.on_error(error_with_request_id);
    app.get("/x", [](Request&, Response& res) { res.text("x"); });
    rivet::RunOptions options = rivet::test::local_server();
    options.ops.rate_limit.enabled = true;
    options.ops.rate_limit.requests_per_second = 0.001;
    options.ops.rate_limit.burst = 1;
    uint16_t port = app.start(options);
    const std::string get = "GET /x HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n";
    EXPECT_TRUE(rivet::test::exchange(port, get).ends_with("\r\n\r\nx"));
    auto limited = rivet::test::exchange(port, get);
    EXPECT_TRUE(limited.starts_with("HTTP/1.1 429")) << limited;
    expect_the_body_quotes_the_id(limited);
    app.stop();
}

TEST(Refusal, ARouteBodyLimitMustBePositive) {
    rivet::App app;
    EXPECT_THROW(app.post("/x", [](Request&, Response&) {}).max_body(0), std::invalid_argument);
}

}  // namespace
