// What building a rivet::Request costs per request, and what a handler's first look at it costs
// (method, path, one header, one route parameter), measured in a tight loop over a parsed head.
// bench/micro/run.sh builds it against two builds of the library for before/after figures.
#include <rivet/request.hpp>

#include <chrono>
#include <cstdio>
#include <string>
#include <vector>

#include "app/routing/router.hpp"
#include "http/request_parser.hpp"

int main() {
    const std::string raw =
        "GET /users/42?x=1 HTTP/1.1\r\nHost: example.com\r\nUser-Agent: wrk\r\n"
        "Accept: */*\r\nAuthorization: Bearer token\r\n\r\n";
    std::vector<rivet::http::Header> storage(16);
    rivet::http::RequestHead head;
    rivet::http::ParserLimits limits;
    auto r = rivet::http::parse_request_head(raw, head, storage, limits);
    if (r.kind != rivet::http::ParseResult::Complete) return 1;
    rivet::app::Router router;
    router.add(rivet::http::Method::Get, "/users/:id", 0);
    auto match = router.find(head.method, head.path);

    constexpr int kRounds = 20'000'000;
    size_t sink = 0;
    auto t0 = std::chrono::steady_clock::now();
    for (int i = 0; i < kRounds; ++i) {
        rivet::Request req(head, {}, match.params);
        sink += reinterpret_cast<uintptr_t>(&req) & 1;
        asm volatile("" : : "g"(&req) : "memory");
    }
    auto t1 = std::chrono::steady_clock::now();
    for (int i = 0; i < kRounds; ++i) {
        rivet::Request req(head, {}, match.params);
        asm volatile("" : : "g"(&req) : "memory");
        sink += req.path().size() + req.header("authorization").size() + req.param("id").size() +
                (req.method() == rivet::Method::Get);
    }
    auto t2 = std::chrono::steady_clock::now();
    auto ns = [](auto a, auto b) {
        return std::chrono::duration<double, std::nano>(b - a).count() / kRounds;
    };
    std::printf("build %.2f ns  build+read %.2f ns  (sink %zu)\n", ns(t0, t1), ns(t1, t2), sink);
    return 0;
}
