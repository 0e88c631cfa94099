// Response::cookie and delete_cookie: the Set-Cookie fields they add, and what they refuse
// before adding anything.
#include <rivet/response.hpp>

#include <gtest/gtest.h>

#include <stdexcept>

namespace {

using namespace std::chrono_literals;
using rivet::Cookie;
using rivet::Response;
using rivet::SameSite;

std::vector<std::string> set_cookies(const Response& res) {
    std::vector<std::string> out;
    for (rivet::HeaderField f : res.headers())
        if (f.name == "Set-Cookie") out.emplace_back(f.value);
    return out;
}

TEST(ResponseCookie, EveryAttributeInOrder) {
    Response res;
    res.cookie({.name = "__Host-id",
                .value = "abc",
                .path = "/",
                .max_age = 3600s,
                .expires = std::chrono::system_clock::time_point(784111777s),
                .secure = true,
                .http_only = true,
                .same_site = SameSite::None,
                .partitioned = true});
    res.cookie({.name = "theme",
                .value = "dark",
                .path = "/app",
                .domain = "example.com",
                .same_site = SameSite::Strict});
    res.cookie({.name = "plain", .value = "\"quoted\"", .same_site = SameSite::Lax});
    EXPECT_EQ(set_cookies(res),
              (std::vector<std::string>{
                  "__Host-id=abc; Path=/; Max-Age=3600; Expires=Sun, 06 Nov 1994 08:49:37 GMT; "
                  "Secure; HttpOnly; SameSite=None; Partitioned",
                  "theme=dark; Path=/app; Domain=example.com; SameSite=Strict",
                  "plain=\"quoted\"; SameSite=Lax"}));
}

TEST(ResponseCookie, RefusesWhatWouldBreakTheFieldOrBeDropped) {
    const std::vector<Cookie> bad = {
        {.name = ""},
        {.name = "a b", .value = "x"},
        {.name = "a", .value = "x y"},
        {.name = "a", .value = "x;y"},
        {.name = "a", .value = "x\r\nSet-Cookie: evil=1"},
        {.name = "a", .value = "caf\xc3\xa9"},
        {.name = "a", .path = "/x;Domain=evil"},
        {.name = "a", .path = "relative"},
        {.name = "a", .domain = "evil.com\r\n"},
        {.name = "a", .max_age = -1s},
        {.name = "a", .same_site = SameSite::None},  // without Secure
        {.name = "a", .partitioned = true},          // without Secure
        {.name = "__Secure-a"},
        {.name = "__Host-a", .path = "/"},  // without Secure
    };
    for (size_t i = 0; i < bad.size(); ++i) {
        Response res;
        EXPECT_THROW(res.cookie(bad[i]), std::invalid_argument) << i;
        EXPECT_TRUE(res.headers().empty()) << i;
    }
    // __Host-: Secure, Path=/ and no Domain, or refused.
    Response res;
    Cookie host{.name = "__Host-a", .path = "/", .secure = true};
    EXPECT_NO_THROW(res.cookie(host));
    host.domain = "example.com";
    EXPECT_THROW(res.cookie(host), std::invalid_argument);
    host.domain.clear();
    host.path = "/app";
    EXPECT_THROW(res.cookie(host), std::invalid_argument);
    EXPECT_EQ(set_cookies(res).size(), 1u);
}

TEST(ResponseCookie, DeleteSendsAnExpiredEmptyCookie) {
    Response res;
    res.delete_cookie("theme", "/app");
    EXPECT_EQ(set_cookies(res),
              (std::vector<std::string>{"theme=; Path=/app; Max-Age=0; "
                                        "Expires=Thu, 01 Jan 1970 00:00:00 GMT"}));
    EXPECT_THROW(res.delete_cookie("bad name"), std::invalid_argument);
}

}  // namespace
