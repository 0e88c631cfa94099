// Request::json(): a hostile body is refused before it costs memory (JsonLimits: size, depth),
// a number beyond a double is the client's mistake (400, never an escaping out_of_range), and
// the message quoting the body is bounded.
#include <rivet/http_error.hpp>
#include <rivet/request.hpp>

#include <gtest/gtest.h>

#include <cstdint>
#include <functional>
#include <string>
#include <vector>

#include "app/routing/router.hpp"
#include "http/request_parser.hpp"

namespace {

// The HttpError json() throws for `body` ({0, ""} when it parses).
struct Refusal {
    int status = 0;
    std::string message;
};

Refusal refusal(const std::string& body, const rivet::JsonLimits& limits = {}) {
    std::string bytes = "POST /j HTTP/1.1\r\nHost: h\r\n\r\n";
    std::vector<rivet::http::Header> storage(4);
    rivet::http::RequestHead head;
    rivet::http::parse_request_head(bytes, head, storage, {});
    rivet::app::RouteParams params;
    rivet::Request req(head, body, params);
    try {
        req.json(limits);
    } catch (const rivet::HttpError& e) {
        return {e.status(), std::string(e.message())};
    }
    return {};
}

std::string nested(size_t depth) {
    return std::string(depth, '[') + std::string(depth, ']');
}

TEST(RequestJson, NestingUpToTheDepthLimitParsesAndOneLevelMoreIsRefused) {
    EXPECT_EQ(refusal(nested(128)).status, 0);
    Refusal deep = refusal(nested(129));
    EXPECT_EQ(deep.status, 400);
    EXPECT_EQ(deep.message, "invalid JSON body: nested deeper than 128 levels (at byte 128)");
    // Objects count as arrays do; an unclosed document is refused by depth before the parser
    // could build a level per byte.
    EXPECT_EQ(refusal(std::string(1'000'000, '[')).status, 400);
    EXPECT_EQ(refusal(R"({"a":{"b":[1]}})", {.max_bytes = 100, .max_depth = 2}).status, 400);
    EXPECT_EQ(refusal(R"({"a":{"b":1}})", {.max_bytes = 100, .max_depth = 2}).status, 0);
}

TEST(RequestJson, BracketsInsideStringsAreNotNesting) {
    EXPECT_EQ(refusal(R"({"a":"[[[[\"{{{{"})", {.max_bytes = 100, .max_depth = 1}).status, 0);
}

TEST(RequestJson, ABodyOverMaxBytesIs413BeforeParsing) {
    const std::string at_limit = "[" + std::string(98, ' ') + "]";  // 100 bytes
    EXPECT_EQ(refusal(at_limit, {.max_bytes = 100, .max_depth = 128}).status, 0);
    Refusal big = refusal(at_limit + " ", {.max_bytes = 100, .max_depth = 128});
    EXPECT_EQ(big.status, 413);
    EXPECT_EQ(big.message, "JSON body over max_bytes (100): 101 bytes");
    // The default is 1 MiB.
    EXPECT_EQ(refusal(std::string(1024 * 1024 + 1, ' ')).status, 413);
}

TEST(RequestJson, ANumberBeyondADoubleIsA400WithABoundedMessage) {
    for (const std::string& number : {std::string("1e400"), std::string("-1e400"),
                                      std::string(400, '9'), std::string(100'000, '9')}) {
        Refusal r = refusal(R"({"value": )" + number + "}");
        EXPECT_EQ(r.status, 400) << number.size();
        EXPECT_TRUE(r.message.starts_with("invalid JSON body: number overflow")) << r.message;
        EXPECT_LT(r.message.size(), 300u) << number.size();
    }
}

TEST(RequestJson, ASyntaxErrorQuotingALongTokenIsBounded) {
    Refusal r = refusal("[\"" + std::string(200'000, 'x'));  // a string that never ends
    EXPECT_EQ(r.status, 400);
    EXPECT_TRUE(r.message.starts_with("invalid JSON body: parse error")) << r.message;
    EXPECT_LT(r.message.size(), 300u);
    EXPECT_NE(r.message.find("more bytes)"), std::string::npos) << r.message;
}

}  // namespace
