// serve_static through the framework, on a real socket: routes beside files, redirects,
// conditional and range answers, HEAD, and the cache counters.
#include <rivet/rivet.hpp>

#include <gtest/gtest.h>

#include <chrono>
#include <filesystem>
#include <string>
#include <thread>

#include "../raw_client.hpp"
#include "core/clock.hpp"
#include "temp_dir.hpp"

namespace rivet {
namespace {

// One request with "Connection: close"; the whole answer, head and body.
std::string fetch(uint16_t port, const std::string& method, const std::string& target,
                  const std::string& fields = "") {
    return test::exchange(
        port,
        method + " " + target + " HTTP/1.1\r\nHost: t\r\nConnection: close\r\n" + fields + "\r\n",
        0);  // until the close
}

std::string body_of(const std::string& response) {
    size_t end = response.find("\r\n\r\n");
    return end == std::string::npos ? "" : response.substr(end + 4);
}

class StaticFilesTest : public ::testing::Test {
protected:
    void SetUp() override {
        dir_.write("index.html", "<p>home</p>");
        dir_.write("hello", "a file named like a route");
        dir_.write("json", "a file where a POST route lives");
        dir_.write("docs/guide.txt", "0123456789");
        dir_.mkdir("empty");
        assets_.write("app.css", "body{}");
    }
    void start() {
        app_.get("/hello", [](Request&, Response& res) { res.text("route"); });
        app_.post("/json", [](Request&, Response& res) { res.text("posted"); });
        app_.get("/loop",
                 [](Request& req, Response& res) { res.text(std::to_string(req.loop_index())); });
        // A TTL longer than any run: a lookup's count does not depend on the machine's pace.
        root_files_ = &app_.serve_static("/", dir_.path(),
                                         {.max_age = 60, .cache_ttl = std::chrono::hours(1)});
        app_.serve_static("/assets/", assets_.path());
        app_.serve_static("/fresh/", fresh_.path(), {.cache_ttl = std::chrono::milliseconds(0)});
        RunOptions options;
        options.host = "127.0.0.1";
        options.port = 0;
        options.threads = 2;
        options.workers = 1;
        options.quiet = true;
        port_ = app_.start(options);
    }
    void TearDown() override { app_.stop(); }

    files::testing::TempDir dir_, assets_, fresh_;
    App app_;
    StaticFiles* root_files_ = nullptr;
    uint16_t port_ = 0;
};

TEST_F(StaticFilesTest, RoutesWinOverFiles) {
    start();
    EXPECT_EQ(body_of(fetch(port_, "GET", "/hello")), "route");
    EXPECT_EQ(body_of(fetch(port_, "GET", "/")), "<p>home</p>");
    EXPECT_EQ(body_of(fetch(port_, "GET", "/index.html")), "<p>home</p>");
    // GET on a path a route serves with POST only: 405, whatever file sits there.
    std::string r = fetch(port_, "GET", "/nothing-here");
    EXPECT_TRUE(r.starts_with("HTTP/1.1 404")) << r;
    r = fetch(port_, "DELETE", "/index.html");
    EXPECT_TRUE(r.starts_with("HTTP/1.1 405")) << r;
    EXPECT_NE(r.find("Allow: GET, HEAD"), std::string::npos) << r;
    EXPECT_EQ(body_of(fetch(port_, "POST", "/json")), "posted");
}

TEST_F(StaticFilesTest, FileMissingOnARoutePathIs405) {
    dir_.write("json", "");
    std::filesystem::remove(dir_ / "json");
    start();
    std::string r = fetch(port_, "GET", "/json");
    EXPECT_TRUE(r.starts_with("HTTP/1.1 405")) << r;
    EXPECT_NE(r.find("POST"), std::string::npos) << r;
}

TEST_F(StaticFilesTest, MountsAndRedirects) {
    start();
    std::string r = fetch(port_, "GET", "/assets/app.css");
    EXPECT_TRUE(r.starts_with("HTTP/1.1 200")) << r;
    EXPECT_NE(r.find("Content-Type: text/css; charset=utf-8"), std::string::npos) << r;
    EXPECT_EQ(r.find("Cache-Control"), std::string::npos) << r;  // not set on this mount
    r = fetch(port_, "GET", "/assets?x=1");
    EXPECT_TRUE(r.starts_with("HTTP/1.1 301")) << r;
    EXPECT_NE(r.find("Location: /assets/?x=1\r\n"), std::string::npos) << r;
    r = fetch(port_, "GET", "/docs?a=b");
    EXPECT_NE(r.find("Location: /docs/?a=b\r\n"), std::string::npos) << r;
    // The Location is built from the resolved path: never "//host" of the request.
    r = fetch(port_, "GET", "//docs");
    EXPECT_NE(r.find("Location: /docs/\r\n"), std::string::npos) << r;
    r = fetch(port_, "GET", "/empty/");
    EXPECT_TRUE(r.starts_with("HTTP/1.1 403")) << r;  // no index, no listing
}

TEST_F(StaticFilesTest, ValidatorsRangesAndHead) {
    start();
    std::string r = fetch(port_, "GET", "/docs/guide.txt");
    EXPECT_NE(r.find("Cache-Control: max-age=60\r\n"), std::string::npos) << r;
    size_t at = r.find("ETag: ");
    ASSERT_NE(at, std::string::npos);
    std::string etag = r.substr(at + 6, r.find("\r\n", at) - at - 6);
    r = fetch(port_, "GET", "/docs/guide.txt", "If-None-Match: " + etag + "\r\n");
    EXPECT_TRUE(r.starts_with("HTTP/1.1 304")) << r;
    EXPECT_NE(r.find("ETag: " + etag), std::string::npos) << r;
    EXPECT_EQ(body_of(r), "");
    r = fetch(port_, "GET", "/docs/guide.txt", "If-Match: \"nope\"\r\n");
    EXPECT_TRUE(r.starts_with("HTTP/1.1 412")) << r;
    r = fetch(port_, "GET", "/docs/guide.txt", "Range: bytes=2-4\r\n");
    EXPECT_TRUE(r.starts_with("HTTP/1.1 206")) << r;
    EXPECT_NE(r.find("Content-Range: bytes 2-4/10\r\n"), std::string::npos) << r;
    EXPECT_EQ(body_of(r), "234");
    r = fetch(port_, "GET", "/docs/guide.txt", "Range: bytes=10-\r\n");
    EXPECT_TRUE(r.starts_with("HTTP/1.1 416")) << r;
    EXPECT_NE(r.find("Content-Range: bytes */10\r\n"), std::string::npos) << r;
    r = fetch(port_, "HEAD", "/docs/guide.txt");
    EXPECT_TRUE(r.starts_with("HTTP/1.1 200")) << r;
    EXPECT_NE(r.find("Content-Length: 10\r\n"), std::string::npos) << r;
    EXPECT_EQ(body_of(r), "");
}

TEST_F(StaticFilesTest, PerLoopCachesCount) {
    start();
    for (int i = 0; i < 20; ++i) fetch(port_, "GET", "/docs/guide.txt");
    StaticStats s = root_files_->stats();
    // Each request looks up the file. Its two precompressed variants (.br, .gz: whether one
    // exists decides Vary, whatever the request accepts) are looked up once per loop: missing,
    // they are known missing on the file's entry for as long as the cache trusts that.
    // Each of the three is missed once per loop that served (one or both of the two).
    EXPECT_GE(s.misses, 3u);
    EXPECT_LE(s.misses, 6u);
    const uint64_t lookups = s.hits + s.misses + s.revalidated + s.changed;
    EXPECT_EQ(lookups, 20u + 2 * (s.misses / 3)) << "misses " << s.misses;
    EXPECT_EQ(s.misses % 3, 0u);
    EXPECT_EQ(app_.static_stats().hits, s.hits);  // the only mount that saw requests
    std::string loop = body_of(fetch(port_, "GET", "/loop"));
    EXPECT_TRUE(loop == "0" || loop == "1") << loop;
}

// A file known to have no precompressed variant skips looking for one only while the cache
// trusts that (here never: a TTL of 0 checks on every request), so a variant put beside it is
// served at once, and one taken away is no longer offered.
TEST_F(StaticFilesTest, AVariantAddedOrRemovedIsSeenAsTheCacheAllows) {
    fresh_.write("a.txt", "plain text, plain text, plain text");
    start();
    const std::string accept = "Accept-Encoding: gzip\r\n";
    for (int round = 0; round < 3; ++round) {
        std::string r = fetch(port_, "GET", "/fresh/a.txt", accept);
        EXPECT_TRUE(r.starts_with("HTTP/1.1 200")) << r;
        EXPECT_EQ(r.find("Content-Encoding:"), std::string::npos) << r;
        EXPECT_EQ(r.find("Vary:"), std::string::npos) << r;
        EXPECT_EQ(body_of(r), "plain text, plain text, plain text");

        fresh_.write("a.txt.gz", "pretend gzip " + std::to_string(round));
        r = fetch(port_, "GET", "/fresh/a.txt", accept);
        EXPECT_NE(r.find("Content-Encoding: gzip\r\n"), std::string::npos) << r;
        EXPECT_NE(r.find("Vary: Accept-Encoding\r\n"), std::string::npos) << r;
        EXPECT_EQ(body_of(r), "pretend gzip " + std::to_string(round));

        std::filesystem::remove(fresh_ / "a.txt.gz");
    }
}

// Under a TTL above 0, a file whose variants were found missing does not look for them again
// while the cache trusts those missing entries, and looks once it no longer does: a .gz put
// beside the file is served, but not before the TTL has run from the first request. The times
// are read around the requests (the entries were checked after `sent`, by a clock that may trail
// it), so a slow machine only delays the checks; it cannot make one fail.
TEST(StaticFilesTtl, AVariantIsServedOnceItsAbsenceIsNoLongerTrusted) {
    using Clock = std::chrono::steady_clock;  // CLOCK_MONOTONIC, which the cache's clock trails
    constexpr auto kTtl = std::chrono::milliseconds(300);
    files::testing::TempDir dir;
    dir.write("a.txt", "plain text, plain text, plain text");
    App app;
    app.serve_static("/", dir.path(), {.cache_ttl = kTtl});
    const uint16_t port = app.start(test::local_server());  // one loop: one cache
    const std::string accept = "Accept-Encoding: gzip\r\n";
    const auto sent = Clock::now();
    std::string r = fetch(port, "GET", "/a.txt", accept);
    EXPECT_EQ(r.find("Content-Encoding:"), std::string::npos) << r;

    dir.write("a.txt.gz", "pretend gzip");
    bool served = false;
    for (const auto deadline = sent + std::chrono::seconds(60);
         !served && Clock::now() < deadline;) {
        r = fetch(port, "GET", "/a.txt", accept);
        served = r.find("Content-Encoding: gzip\r\n") != std::string::npos;
        if (served) {
            // The cache's clock is the coarse one: its entry may date from up to its lag before
            // `sent` (a jiffy, and the millisecond it cuts off).
            const auto lag = std::chrono::milliseconds(core::monotonic_ms_lag_bound());
            EXPECT_GE(Clock::now() - sent, kTtl - lag)
                << "served while its absence was still trusted";
            EXPECT_NE(r.find("Vary: Accept-Encoding\r\n"), std::string::npos) << r;
            EXPECT_EQ(body_of(r), "pretend gzip");
        } else {
            EXPECT_EQ(body_of(r), "plain text, plain text, plain text");
            std::this_thread::sleep_for(std::chrono::milliseconds(10));
        }
    }
    EXPECT_TRUE(served) << "the .gz was never served: " << r;
    app.stop();
}

TEST(StaticFilesApi, MountMustBeAPath) {
    App app;
    EXPECT_THROW(app.serve_static("assets", "."), std::invalid_argument);
    EXPECT_THROW(app.serve_static("", "."), std::invalid_argument);
    EXPECT_EQ(app.serve_static("/a/", ".").mount(), "/a");
}

// Every answer adds the Cache-Control as the framework's own field, unchecked: a value that
// would end the field early is refused when the mount is made, not answered with it.
TEST(StaticFilesApi, CacheControlThatWouldEndTheFieldIsRefusedWhenMounted) {
    App app;
    using namespace std::string_literals;
    for (const std::string& bad : {"max-age=1\r\nX-Evil: 1"s, "no-cache\n"s, "a\0b"s}) {
        StaticOptions options;
        options.cache_control = bad;
        EXPECT_THROW(app.serve_static("/x", ".", options), std::invalid_argument) << bad;
    }
    StaticOptions fine;
    fine.cache_control = "public, max-age=60";
    EXPECT_EQ(app.serve_static("/y", ".", fine).mount(), "/y");
}

// The types go into a multipart range answer's part heads as they are: refused when mounted too.
TEST(StaticFilesApi, TypesThatWouldEndAFieldAreRefusedWhenMounted) {
    App app;
    StaticOptions bad_default;
    bad_default.default_type = "text/plain\r\nX-Evil: 1";
    EXPECT_THROW(app.serve_static("/x", ".", bad_default), std::invalid_argument);
    StaticOptions bad_type;
    bad_type.mime_types = {{"txt", "text/plain"}, {"evil", "text/html\n"}};
    EXPECT_THROW(app.serve_static("/x", ".", bad_type), std::invalid_argument);
    StaticOptions fine;
    fine.mime_types = {{"txt", "text/plain; charset=utf-8"}};
    EXPECT_EQ(app.serve_static("/z", ".", fine).mount(), "/z");
}

}  // namespace
}  // namespace rivet
