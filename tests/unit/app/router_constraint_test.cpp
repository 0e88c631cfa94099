// Constrained route parameters: each kind matching and not, fall-through to other branches,
// 404/405 with constraints, malformed constraints refused.
#include <gtest/gtest.h>

#include <string>

#include "app/routing/route_constraint.hpp"
#include "app/routing/router.hpp"

using rivet::app::method_bit;
using rivet::app::MethodSet;
using rivet::app::RouteConstraint;
using rivet::app::Router;
using rivet::http::Method;

namespace {

using Kind = Router::Match::Kind;

// The route id found, or -1 for NotFound, -2 for MethodNotAllowed.
long get(const Router& r, std::string_view path, Method m = Method::Get) {
    auto res = r.find(m, path);
    if (res.kind == Kind::NotFound) return -1;
    if (res.kind == Kind::MethodNotAllowed) return -2;
    return res.route;
}

bool ok(std::string_view spec, std::string_view segment) {
    return RouteConstraint(spec).matches(segment);
}

}  // namespace

TEST(RouteConstraint, Int) {
    EXPECT_TRUE(ok("<int>", "0"));
    EXPECT_TRUE(ok("<int>", "42"));
    EXPECT_TRUE(ok("<int>", "-42"));
    EXPECT_TRUE(ok("<int>", "007"));
    EXPECT_TRUE(ok("<int>", "9223372036854775807"));
    EXPECT_TRUE(ok("<int>", "-9223372036854775808"));
    EXPECT_FALSE(ok("<int>", "9223372036854775808"));  // one past int64
    EXPECT_FALSE(ok("<int>", "-9223372036854775809"));
    EXPECT_FALSE(ok("<int>", "+1"));
    EXPECT_FALSE(ok("<int>", "-"));
    EXPECT_FALSE(ok("<int>", "1a"));
    EXPECT_FALSE(ok("<int>", " 1"));
    EXPECT_FALSE(ok("<int>", "1.5"));
    EXPECT_FALSE(ok("<int>", ""));
}

TEST(RouteConstraint, Uint) {
    EXPECT_TRUE(ok("<uint>", "0"));
    EXPECT_TRUE(ok("<uint>", "18446744073709551615"));
    EXPECT_FALSE(ok("<uint>", "18446744073709551616"));  // one past uint64
    EXPECT_FALSE(ok("<uint>", "-1"));
    EXPECT_FALSE(ok("<uint>", "-0"));
    EXPECT_FALSE(ok("<uint>", "0x10"));
    EXPECT_FALSE(ok("<uint>", ""));
}

TEST(RouteConstraint, HexAndUuid) {
    EXPECT_TRUE(ok("<hex>", "deadBEEF0123456789"));
    EXPECT_TRUE(ok("<hex>", std::string(200, 'f')));  // any length: digests
    EXPECT_FALSE(ok("<hex>", "0xff"));
    EXPECT_FALSE(ok("<hex>", "g"));
    EXPECT_FALSE(ok("<hex>", ""));
    EXPECT_TRUE(ok("<uuid>", "123e4567-e89b-12d3-a456-426614174000"));
    EXPECT_TRUE(ok("<uuid>", "123E4567-E89B-12D3-A456-426614174000"));
    EXPECT_FALSE(ok("<uuid>", "123e4567e89b12d3a456426614174000"));
    EXPECT_FALSE(ok("<uuid>", "123e4567-e89b-12d3-a456-42661417400"));
    EXPECT_FALSE(ok("<uuid>", "123e4567-e89b-12d3-a456-4266141740000"));
    EXPECT_FALSE(ok("<uuid>", "123e4567-e89b-12d3-a456_426614174000"));
    EXPECT_FALSE(ok("<uuid>", "g23e4567-e89b-12d3-a456-426614174000"));
}

TEST(RouteConstraint, ExpressionMatchesTheWholeSegment) {
    EXPECT_TRUE(ok(R"((\d+))", "123"));
    EXPECT_FALSE(ok(R"((\d+))", "123a"));  // whole segment, not a search
    EXPECT_FALSE(ok(R"((\d+))", "a123"));
    EXPECT_TRUE(ok("(v(1|2))", "v2"));
    EXPECT_FALSE(ok("(v(1|2))", "v3"));
    EXPECT_TRUE(ok(R"(([a-z]+\([0-9]\)))", "f(1)"));  // escaped parentheses
    EXPECT_TRUE(ok("([()]x)", "(x"));                 // parentheses in a class
    EXPECT_TRUE(ok("(a b?#)", "a #"));                // '?', '#' and spaces are fine in here
    // Past kMaxPatternSegment bytes nothing matches, even what the expression accepts.
    const size_t max = RouteConstraint::kMaxPatternSegment;
    EXPECT_TRUE(ok("(a+)", std::string(max, 'a')));
    EXPECT_FALSE(ok("(a+)", std::string(max + 1, 'a')));
}

TEST(RouteConstraint, ExpressionCostStaysLinear) {
    // Backtracking would take seconds on this (nested quantifiers, a failing tail); the
    // polynomial mode answers at once. A count, not a clock: 50 lookups must all finish.
    RouteConstraint c("((a+)+)");
    const std::string hostile = std::string(RouteConstraint::kMaxPatternSegment - 1, 'a') + "!";
    int refused = 0;
    for (int i = 0; i < 50; ++i) refused += !c.matches(hostile);
    EXPECT_EQ(refused, 50);
}

TEST(RouteConstraint, EndOfBalancesParentheses) {
    auto end = [](std::string_view p) { return RouteConstraint::end_of(p, p.find_first_of("<(")); };
    EXPECT_EQ(end("/:id<int>/x"), 9u);
    EXPECT_EQ(end(R"(/:id(\d+)/x)"), 9u);
    EXPECT_EQ(end("/:id(a(b)c)/x"), 11u);
    EXPECT_EQ(end(R"(/:id(\)))"), 8u);
    EXPECT_EQ(end("/:id([)])"), 9u);
    EXPECT_THROW(end("/:id(a"), std::invalid_argument);
    EXPECT_THROW(end("/:id((a)"), std::invalid_argument);
    EXPECT_THROW(end("/:id<int"), std::invalid_argument);
}

TEST(RouterConstraints, TypedAndPlainCoexist) {
    for (int order = 0; order < 2; ++order) {  // priority does not depend on registration order
        Router r;
        if (order == 0) {
            r.add(Method::Get, "/items/:id<int>", 1);
            r.add(Method::Get, "/items/:slug", 2);
            r.add(Method::Get, "/items/new", 3);
        } else {
            r.add(Method::Get, "/items/new", 3);
            r.add(Method::Get, "/items/:slug", 2);
            r.add(Method::Get, "/items/:id<int>", 1);
        }
        auto m = r.find(Method::Get, "/items/42");
        ASSERT_EQ(m.kind, Kind::Found);
        EXPECT_EQ(m.route, 1u);
        EXPECT_EQ(m.params.get("id"), "42");
        m = r.find(Method::Get, "/items/abc");
        ASSERT_EQ(m.kind, Kind::Found);
        EXPECT_EQ(m.route, 2u);
        ASSERT_EQ(m.params.size, 1u);
        EXPECT_EQ(m.params.get("slug"), "abc");
        EXPECT_EQ(get(r, "/items/new"), 3);
        EXPECT_EQ(get(r, "/items/-7"), 1);
        EXPECT_EQ(get(r, "/items/99999999999999999999"), 2);  // not an int64: plain branch
    }
}

TEST(RouterConstraints, NoPlainSiblingMeansNotFound) {
    Router r;
    r.add(Method::Get, "/items/:id<uint>", 1);
    r.add(Method::Get, "/users/:id(u[0-9]{3})/posts", 2);
    EXPECT_EQ(get(r, "/items/5"), 1);
    EXPECT_EQ(get(r, "/items/x"), -1);
    EXPECT_EQ(get(r, "/items/-5"), -1);
    EXPECT_EQ(get(r, "/items/"), -1);
    EXPECT_EQ(get(r, "/users/u123/posts"), 2);
    EXPECT_EQ(r.find(Method::Get, "/users/u123/posts").params.get("id"), "u123");
    EXPECT_EQ(get(r, "/users/u1234/posts"), -1);
    EXPECT_EQ(get(r, "/users/u123"), -1);
}

TEST(RouterConstraints, OrderAmongConstraints) {
    Router r;
    r.add(Method::Get, "/x/:v(.*)", 5);  // registered first, tried after every type
    r.add(Method::Get, "/x/:v<hex>", 4);
    r.add(Method::Get, "/x/:v<int>", 3);
    r.add(Method::Get, "/x/:v<uint>", 2);
    r.add(Method::Get, "/x/:v<uuid>", 1);
    EXPECT_EQ(get(r, "/x/123e4567-e89b-12d3-a456-426614174000"), 1);
    EXPECT_EQ(get(r, "/x/42"), 2);
    EXPECT_EQ(get(r, "/x/-42"), 3);
    EXPECT_EQ(get(r, "/x/ff"), 4);
    EXPECT_EQ(get(r, "/x/zz"), 5);
    // Expressions among themselves: registration order.
    Router e;
    e.add(Method::Get, "/y/:v([a-z]+)", 1);
    e.add(Method::Get, "/y/:v([a-c]+)", 2);
    e.add(Method::Get, "/y/:v(\\d+)", 3);
    EXPECT_EQ(get(e, "/y/abc"), 1);
    EXPECT_EQ(get(e, "/y/12"), 3);
    EXPECT_EQ(get(e, "/y/A"), -1);
}

TEST(RouterConstraints, FallThroughBelowAConstrainedBranch) {
    // The constrained branch matches the segment but nothing under it matches the rest: the
    // search goes on with the plain parameter.
    Router r;
    r.add(Method::Get, "/a/:n<int>/edit", 1);
    r.add(Method::Get, "/a/:name/show", 2);
    r.add(Method::Post, "/a/:n<int>/show", 3);
    EXPECT_EQ(get(r, "/a/5/edit"), 1);
    auto m = r.find(Method::Get, "/a/5/show");  // the int branch has only POST here
    ASSERT_EQ(m.kind, Kind::Found);
    EXPECT_EQ(m.route, 2u);
    ASSERT_EQ(m.params.size, 1u);
    EXPECT_EQ(m.params.names[0], "name");
    EXPECT_EQ(m.params.get("name"), "5");
    EXPECT_EQ(get(r, "/a/5/show", Method::Post), 3);
    EXPECT_EQ(get(r, "/a/x/edit"), -1);
}

TEST(RouterConstraints, SameConstraintSharesANode) {
    Router r;
    r.add(Method::Get, "/u/:id<int>", 1);
    r.add(Method::Put, "/u/:key<int>", 2);  // same shape, other method: fine
    EXPECT_THROW(r.add(Method::Get, "/u/:other<int>", 3), std::invalid_argument);  // duplicate
    r.add(Method::Get, "/u/:id<uint>", 4);  // another constraint: another branch
    r.add(Method::Get, "/u/:id(\\d+)", 5);
    EXPECT_THROW(r.add(Method::Get, "/u/:x(\\d+)", 6), std::invalid_argument);
    r.add(Method::Get, "/u/:id([0-9]+)", 7);  // same language, other spelling: its own branch
    EXPECT_EQ(get(r, "/u/-1"), 1);
    EXPECT_EQ(get(r, "/u/1"), 4);
    EXPECT_EQ(r.find(Method::Put, "/u/-1").params.get("key"), "-1");
    EXPECT_EQ(get(r, "/u/1", Method::Put), 2);  // uint branch has no PUT: falls to int
}

TEST(RouterConstraints, MethodNotAllowedCountsOnlyReachedBranches) {
    Router r;
    r.add(Method::Delete, "/items/:id<int>", 1);
    r.add(Method::Get, "/items/:id<int>", 2);
    r.add(Method::Post, "/items/:name([a-z]+)", 3);
    auto m = r.find(Method::Put, "/items/42");
    ASSERT_EQ(m.kind, Kind::MethodNotAllowed);
    EXPECT_EQ(m.allowed, MethodSet(method_bit(Method::Delete) | method_bit(Method::Get) |
                                   method_bit(Method::Head)));
    m = r.find(Method::Put, "/items/abc");
    ASSERT_EQ(m.kind, Kind::MethodNotAllowed);
    EXPECT_EQ(m.allowed, method_bit(Method::Post));
    EXPECT_EQ(get(r, "/items/42", Method::Head), 2);
    EXPECT_EQ(get(r, "/items/ABC", Method::Put), -1);  // no branch takes it: 404, not 405
}

TEST(RouterConstraints, WildcardStillLast) {
    Router r;
    r.add(Method::Get, "/f/*rest", 1);
    r.add(Method::Get, "/f/:n<int>", 2);
    EXPECT_EQ(get(r, "/f/12"), 2);
    EXPECT_EQ(r.find(Method::Get, "/f/ab").params.get("rest"), "ab");
    EXPECT_EQ(r.find(Method::Get, "/f/12/x").params.get("rest"), "12/x");
}

TEST(RouterConstraints, MalformedConstraintsThrow) {
    const char* bad[] = {
        "/:id<>",         "/:id<float>",  "/:id<int",    "/:id<int>x",   "/:id<int>/:id",
        "/:id(",          "/:id(\\d+",    "/:id((a)",    "/:id(a))",     "/:id()",
        "/:id([)",        "/:id(a)b",     "/*p<int>",    "/*p(a)",       "/:id(a)(b)",
        "/:id(\\d+\x01)", "/:id(a{2,1})", "/:id([b-a])", "/:id((a)\\1)", "/:(a)",
        "/a b/:id(a)",    "/a?/:id(a)",
    };
    for (const char* p : bad) {
        Router r;
        try {
            r.add(Method::Get, p, 1);
            ADD_FAILURE() << "accepted: " << p;
        } catch (const std::invalid_argument& e) {
            EXPECT_NE(std::string(e.what()).find(std::string("\"") + p + "\""), std::string::npos)
                << e.what();
        }
        EXPECT_EQ(r.find(Method::Get, "/1").kind, Kind::NotFound) << p;
    }
}
