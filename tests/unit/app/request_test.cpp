// rivet::Request over a parsed head: accessors, header views, and detach() keeping every view.
#include <rivet/request.hpp>

#include <gtest/gtest.h>

#include <memory>
#include <string>
#include <vector>

#include "app/routing/router.hpp"
#include "http/request_parser.hpp"

namespace {

struct Parsed {
    std::string bytes;
    std::vector<rivet::http::Header> storage = std::vector<rivet::http::Header>(16);
    rivet::http::RequestHead head;
    rivet::app::RouteParams params;

    explicit Parsed(std::string raw) : bytes(std::move(raw)) {
        auto r = rivet::http::parse_request_head(bytes, head, storage, {});
        EXPECT_EQ(r.kind, rivet::http::ParseResult::Complete);
    }
};

TEST(Request, AccessorsAndHeaderView) {
    Parsed p("POST /users/7?x=1 HTTP/1.1\r\nHost: h\r\nX-Token: abc\r\n\r\n");
    p.params.names[0] = "id";
    p.params.values[0] = "7";
    p.params.size = 1;
    rivet::Request req(p.head, "body", p.params);
    EXPECT_EQ(req.method(), rivet::Method::Post);
    EXPECT_EQ(rivet::method_name(req.method()), "POST");
    EXPECT_EQ(req.path(), "/users/7");
    EXPECT_EQ(req.query_string(), "x=1");
    EXPECT_EQ(req.header("x-token"), "abc");
    EXPECT_TRUE(req.has_header("HOST"));
    EXPECT_FALSE(req.has_header("Cookie"));
    EXPECT_EQ(req.param("id"), "7");
    std::vector<std::string> names;
    for (rivet::HeaderField f : req.headers()) names.emplace_back(f.name);
    EXPECT_EQ(names, (std::vector<std::string>{"Host", "X-Token"}));
    EXPECT_EQ(req.headers().size(), 2u);
    EXPECT_EQ(req.headers()[1].value, "abc");
    EXPECT_EQ(req.version_major(), 1);
    EXPECT_EQ(req.version_minor(), 1);
}

TEST(Request, VersionOfAnHttp2StreamSurvivesDetach) {
    Parsed p("GET /x HTTP/1.1\r\nHost: h\r\n\r\n");
    p.head.version_major = 2;  // as engine/http2/ fills it for a stream
    p.head.version_minor = 0;
    rivet::Request req(p.head, "", p.params);
    EXPECT_EQ(req.version_major(), 2);
    EXPECT_EQ(req.version_minor(), 0);
    rivet::Request copy = req.detach();
    EXPECT_EQ(copy.version_major(), 2);
    EXPECT_EQ(copy.version_minor(), 0);
}

TEST(Request, ParamAsConvertsIntegers) {
    Parsed p("GET /x HTTP/1.1\r\nHost: h\r\n\r\n");
    const char* names[] = {"n", "neg", "big", "word", "mixed", "plus", "empty", "max"};
    const char* values[] = {"42", "-7", "300", "abc", "12x", "+5", "", "9223372036854775807"};
    for (size_t i = 0; i < 8; ++i) {
        p.params.names[i] = names[i];
        p.params.values[i] = values[i];
    }
    p.params.size = 8;
    rivet::Request req(p.head, {}, p.params);
    EXPECT_EQ(req.param_as<int>("n"), 42);
    EXPECT_EQ(req.param_as<long long>("neg"), -7);
    EXPECT_EQ(req.param_as<unsigned>("neg"), std::nullopt);  // no sign for unsigned types
    EXPECT_EQ(req.param_as<uint16_t>("big"), 300);
    EXPECT_EQ(req.param_as<uint8_t>("big"), std::nullopt);  // overflow
    EXPECT_EQ(req.param_as<int8_t>("neg"), int8_t{-7});
    EXPECT_EQ(req.param_as<int64_t>("max"), INT64_MAX);
    EXPECT_EQ(req.param_as<int32_t>("max"), std::nullopt);  // overflow
    EXPECT_EQ(req.param_as<uint64_t>("max"), uint64_t{INT64_MAX});
    EXPECT_EQ(req.param_as<int>("word"), std::nullopt);
    EXPECT_EQ(req.param_as<int>("mixed"), std::nullopt);  // the whole value, not a prefix
    EXPECT_EQ(req.param_as<int>("plus"), std::nullopt);
    EXPECT_EQ(req.param_as<int>("empty"), std::nullopt);
    EXPECT_EQ(req.param_as<int>("absent"), std::nullopt);
}

TEST(Request, DetachedCopyOwnsEveryView) {
    auto p = std::make_unique<Parsed>("GET /a/b?q=2 HTTP/1.1\r\nHost: h\r\nX-K: v\r\n\r\n");
    rivet::Request detached = rivet::Request(p->head, "payload", p->params).detach();
    p.reset();  // the connection's bytes are gone
    EXPECT_EQ(detached.path(), "/a/b");
    EXPECT_EQ(detached.query_string(), "q=2");
    EXPECT_EQ(detached.header("X-K"), "v");
    EXPECT_EQ(detached.body(), "payload");
}

TEST(Request, DetachKeepsTheRootPathOfAnAbsoluteFormWithoutOne) {
    // "http://h" has no path: the parser answers "/" (RFC 9112 §3.2.1), not a piece of the target.
    auto p = std::make_unique<Parsed>("GET http://h HTTP/1.1\r\nHost: h\r\n\r\n");
    ASSERT_EQ(p->head.path, "/");
    rivet::Request detached = rivet::Request(p->head, {}, p->params).detach();
    p.reset();
    EXPECT_EQ(detached.path(), "/");
    EXPECT_EQ(detached.target(), "http://h");
}

}  // namespace
