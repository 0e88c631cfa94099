#include "app/routing/router.hpp"

#include <gtest/gtest.h>

#include <string>

using rivet::app::method_bit;
using rivet::app::MethodSet;
using rivet::app::RouteId;
using rivet::app::Router;
using rivet::http::Method;

namespace {

using Kind = Router::Match::Kind;

MethodSet bits(std::initializer_list<Method> ms) {
    MethodSet s = 0;
    for (Method m : ms) s |= method_bit(m);
    return s;
}

// The route id found for GET, or -1 for NotFound, -2 for MethodNotAllowed.
long get(const Router& r, std::string_view path, Method m = Method::Get) {
    auto res = r.find(m, path);
    if (res.kind == Kind::NotFound) return -1;
    if (res.kind == Kind::MethodNotAllowed) return -2;
    return res.route;
}

}  // namespace

TEST(Router, StaticRoutes) {
    Router r;
    r.add(Method::Get, "/", 1);
    r.add(Method::Get, "/hello", 2);
    r.add(Method::Get, "/hello/world", 3);
    r.add(Method::Get, "/help", 4);
    r.add(Method::Get, "/api/v1/users/list", 5);
    EXPECT_EQ(get(r, "/"), 1);
    EXPECT_EQ(get(r, "/hello"), 2);
    EXPECT_EQ(get(r, "/hello/world"), 3);
    EXPECT_EQ(get(r, "/help"), 4);
    EXPECT_EQ(get(r, "/api/v1/users/list"), 5);
    EXPECT_EQ(get(r, "/hel"), -1);
    EXPECT_EQ(get(r, "/helloo"), -1);
    EXPECT_EQ(get(r, "/api/v1/users"), -1);
    EXPECT_EQ(get(r, ""), -1);
    EXPECT_EQ(get(r, "*"), -1);
    EXPECT_EQ(r.find(Method::Get, "/hello").params.size, 0u);
}

TEST(Router, EmptyRouterAndRootOnly) {
    Router r;
    EXPECT_EQ(get(r, "/"), -1);
    r.add(Method::Get, "/", 7);
    EXPECT_EQ(get(r, "/"), 7);
    EXPECT_EQ(get(r, "/x"), -1);
    EXPECT_EQ(get(r, "//"), -1);
}

TEST(Router, Params) {
    Router r;
    r.add(Method::Get, "/users/:id", 1);
    r.add(Method::Get, "/users/:id/posts/:post", 2);
    r.add(Method::Get, "/:lang/docs", 3);
    auto m = r.find(Method::Get, "/users/42");
    ASSERT_EQ(m.kind, Kind::Found);
    EXPECT_EQ(m.route, 1u);
    ASSERT_EQ(m.params.size, 1u);
    EXPECT_EQ(m.params.names[0], "id");
    EXPECT_EQ(m.params.get("id"), "42");
    EXPECT_EQ(m.params.get("nope"), "");

    std::string path = "/users/alice/posts/7";
    m = r.find(Method::Get, path);
    ASSERT_EQ(m.kind, Kind::Found);
    EXPECT_EQ(m.route, 2u);
    EXPECT_EQ(m.params.get("id"), "alice");
    EXPECT_EQ(m.params.get("post"), "7");
    // Values are views into the path that was looked up.
    EXPECT_EQ(m.params.values[0].data(), path.data() + 7);

    EXPECT_EQ(r.find(Method::Get, "/en/docs").params.get("lang"), "en");
    EXPECT_EQ(get(r, "/users/"), -1);  // a parameter is never empty
    EXPECT_EQ(get(r, "/users//posts/1"), -1);
    EXPECT_EQ(get(r, "/users/42/posts"), -1);
    EXPECT_EQ(get(r, "/users/42/posts/"), -1);
}

TEST(Router, SameShapeDifferentNamesPerMethod) {
    Router r;
    r.add(Method::Get, "/u/:id", 1);
    r.add(Method::Put, "/u/:name", 2);
    EXPECT_EQ(r.find(Method::Get, "/u/x").params.get("id"), "x");
    EXPECT_EQ(r.find(Method::Put, "/u/x").params.get("name"), "x");
    EXPECT_THROW(r.add(Method::Get, "/u/:other", 3), std::invalid_argument);
}

TEST(Router, Wildcard) {
    Router r;
    r.add(Method::Get, "/files/*path", 1);
    r.add(Method::Get, "/files/special", 2);
    auto m = r.find(Method::Get, "/files/a/b/c.txt");
    ASSERT_EQ(m.kind, Kind::Found);
    EXPECT_EQ(m.route, 1u);
    EXPECT_EQ(m.params.get("path"), "a/b/c.txt");
    m = r.find(Method::Get, "/files/");
    ASSERT_EQ(m.kind, Kind::Found);
    EXPECT_EQ(m.route, 1u);
    ASSERT_EQ(m.params.size, 1u);
    EXPECT_EQ(m.params.get("path"), "");
    EXPECT_EQ(get(r, "/files"), -1);
    EXPECT_EQ(get(r, "/files/special"), 2);
    EXPECT_EQ(r.find(Method::Get, "/files/special/x").params.get("path"), "special/x");
    EXPECT_EQ(r.find(Method::Get, "/files/specialx").params.get("path"), "specialx");
}

TEST(Router, RootWildcardAndParamThenWildcard) {
    Router r;
    r.add(Method::Get, "/*all", 1);
    r.add(Method::Get, "/api/:ver/*rest", 2);
    EXPECT_EQ(r.find(Method::Get, "/").params.get("all"), "");
    EXPECT_EQ(r.find(Method::Get, "/index.html").params.get("all"), "index.html");
    auto m = r.find(Method::Get, "/api/v2/a/b");
    EXPECT_EQ(m.route, 2u);
    EXPECT_EQ(m.params.get("ver"), "v2");
    EXPECT_EQ(m.params.get("rest"), "a/b");
    // "/api/v2" has no slash for the wildcard: falls back to the root wildcard.
    m = r.find(Method::Get, "/api/v2");
    EXPECT_EQ(m.route, 1u);
    EXPECT_EQ(m.params.size, 1u);
    EXPECT_EQ(m.params.get("all"), "api/v2");
}

TEST(Router, PriorityIndependentOfOrder) {
    for (int order = 0; order < 2; ++order) {
        Router r;
        if (order == 0) {
            r.add(Method::Get, "/x/*w", 3);
            r.add(Method::Get, "/x/:p", 2);
            r.add(Method::Get, "/x/new", 1);
        } else {
            r.add(Method::Get, "/x/new", 1);
            r.add(Method::Get, "/x/:p", 2);
            r.add(Method::Get, "/x/*w", 3);
        }
        EXPECT_EQ(get(r, "/x/new"), 1);
        EXPECT_EQ(get(r, "/x/other"), 2);
        EXPECT_EQ(get(r, "/x/a/b"), 3);
        EXPECT_EQ(get(r, "/x/"), 3);
        EXPECT_EQ(get(r, "/x/newer"), 2);
    }
}

TEST(Router, Backtracking) {
    Router r;
    r.add(Method::Get, "/a/b/c", 1);
    r.add(Method::Get, "/a/:x/d", 2);
    r.add(Method::Get, "/a/*rest", 3);
    EXPECT_EQ(get(r, "/a/b/c"), 1);
    auto m = r.find(Method::Get, "/a/b/d");
    ASSERT_EQ(m.kind, Kind::Found);
    EXPECT_EQ(m.route, 2u);
    EXPECT_EQ(m.params.size, 1u);
    EXPECT_EQ(m.params.get("x"), "b");
    m = r.find(Method::Get, "/a/b/e");
    ASSERT_EQ(m.kind, Kind::Found);
    EXPECT_EQ(m.route, 3u);
    ASSERT_EQ(m.params.size, 1u);  // the abandoned ":x" does not leak into the result
    EXPECT_EQ(m.params.names[0], "rest");
    EXPECT_EQ(m.params.get("rest"), "b/e");
}

TEST(Router, BacktrackingThroughSplitPrefix) {
    Router r;
    r.add(Method::Get, "/search/all", 1);
    r.add(Method::Get, "/sea/:x", 2);
    r.add(Method::Get, "/:a/:b", 3);
    EXPECT_EQ(get(r, "/search/all"), 1);
    EXPECT_EQ(get(r, "/sea/x"), 2);
    EXPECT_EQ(get(r, "/search/none"), 3);
    EXPECT_EQ(r.find(Method::Get, "/search/none").params.get("a"), "search");
}

TEST(Router, BacktrackingForMethod) {
    Router r;
    r.add(Method::Get, "/a/b/d", 1);
    r.add(Method::Post, "/a/:x/d", 2);
    EXPECT_EQ(get(r, "/a/b/d"), 1);
    EXPECT_EQ(get(r, "/a/b/d", Method::Post), 2);
    auto m = r.find(Method::Delete, "/a/b/d");
    ASSERT_EQ(m.kind, Kind::MethodNotAllowed);
    EXPECT_EQ(m.allowed, bits({Method::Get, Method::Head, Method::Post}));
    m = r.find(Method::Delete, "/a/z/d");
    ASSERT_EQ(m.kind, Kind::MethodNotAllowed);
    EXPECT_EQ(m.allowed, bits({Method::Post}));
}

TEST(Router, NotFoundAndMethodNotAllowed) {
    Router r;
    r.add(Method::Get, "/items", 1);
    r.add(Method::Post, "/items", 2);
    r.add(Method::Delete, "/items/:id", 3);
    r.add(Method::Put, "/items/:id", 4);
    EXPECT_EQ(get(r, "/nothing"), -1);
    auto m = r.find(Method::Patch, "/items");
    ASSERT_EQ(m.kind, Kind::MethodNotAllowed);
    EXPECT_EQ(m.allowed, bits({Method::Get, Method::Head, Method::Post}));
    EXPECT_EQ(m.params.size, 0u);
    m = r.find(Method::Get, "/items/9");
    ASSERT_EQ(m.kind, Kind::MethodNotAllowed);
    EXPECT_EQ(m.allowed, bits({Method::Delete, Method::Put}));  // no GET, so no HEAD
    m = r.find(Method::Head, "/items/9");
    EXPECT_EQ(m.kind, Kind::MethodNotAllowed);
    m = r.find(Method::Post, "/items");
    ASSERT_EQ(m.kind, Kind::Found);
    EXPECT_EQ(m.allowed, bits({Method::Get, Method::Head, Method::Post}));
    // An interior node with no route of its own is a 404, not a 405.
    r.add(Method::Get, "/deep/er/path", 5);
    EXPECT_EQ(r.find(Method::Post, "/deep/er").kind, Kind::NotFound);
}

TEST(Router, HeadFallsBackToGet) {
    Router r;
    r.add(Method::Get, "/page", 1);
    r.add(Method::Get, "/both", 2);
    r.add(Method::Head, "/both", 3);
    r.add(Method::Head, "/head-only", 4);
    EXPECT_EQ(get(r, "/page", Method::Head), 1);
    EXPECT_EQ(get(r, "/both", Method::Head), 3);
    EXPECT_EQ(get(r, "/both"), 2);
    EXPECT_EQ(get(r, "/head-only", Method::Head), 4);
    EXPECT_EQ(get(r, "/head-only"), -2);
    // HEAD never serves as a fallback for anything else.
    r.add(Method::Post, "/post", 5);
    EXPECT_EQ(get(r, "/post", Method::Head), -2);
}

TEST(Router, TrailingSlashIsExact) {
    Router r;
    r.add(Method::Get, "/hello", 1);
    r.add(Method::Get, "/dir/", 2);
    r.add(Method::Get, "/p/:id/", 3);
    EXPECT_EQ(get(r, "/hello"), 1);
    EXPECT_EQ(get(r, "/hello/"), -1);
    EXPECT_EQ(get(r, "/dir/"), 2);
    EXPECT_EQ(get(r, "/dir"), -1);
    EXPECT_EQ(get(r, "/p/1/"), 3);
    EXPECT_EQ(get(r, "/p/1"), -1);
    r.add(Method::Get, "/hello/", 4);
    EXPECT_EQ(get(r, "/hello"), 1);
    EXPECT_EQ(get(r, "/hello/"), 4);
}

TEST(Router, ColonAndStarInsideSegmentAreLiteral) {
    Router r;
    r.add(Method::Post, "/v1/jobs:run", 1);
    r.add(Method::Get, "/a*b", 2);
    EXPECT_EQ(get(r, "/v1/jobs:run", Method::Post), 1);
    EXPECT_EQ(get(r, "/v1/jobs:other", Method::Post), -1);
    EXPECT_EQ(get(r, "/a*b"), 2);
    EXPECT_EQ(get(r, "/axb"), -1);
}

TEST(Router, DuplicatesThrow) {
    Router r;
    r.add(Method::Get, "/a", 1);
    r.add(Method::Post, "/a", 2);  // another method is fine
    try {
        r.add(Method::Get, "/a", 3);
        FAIL() << "no throw";
    } catch (const std::invalid_argument& e) {
        EXPECT_NE(std::string(e.what()).find("GET /a"), std::string::npos) << e.what();
    }
    r.add(Method::Get, "/f/*p", 4);
    EXPECT_THROW(r.add(Method::Get, "/f/*q", 5), std::invalid_argument);
    EXPECT_EQ(get(r, "/a"), 1);  // the first registration stays
    EXPECT_EQ(get(r, "/f/x"), 4);
}

TEST(Router, MalformedPatternsThrow) {
    const char* bad[] = {
        "",
        "a",
        "users/:id",
        "/:",
        "/a/:",
        "/a/:/b",
        "/*",
        "/*p/x",
        "/*p/",
        "/:a/:a",
        "/:id.json",
        "/:a-b",
        "/a b",
        "/a?x=1",
        "/a#f",
        "/a\tb",
        "/*a/*b",
        "/:x:y",
        "/:a/:b/:c/:d/:e/:f/:g/:h/:i",
        "/:a/:b/:c/:d/:e/:f/:g/:h/*rest",
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
    }
    // Exactly kMax parameters is fine, and a rejected pattern leaves the router usable.
    Router r;
    r.add(Method::Get, "/:a/:b/:c/:d/:e/:f/:g/*h", 1);
    auto m = r.find(Method::Get, "/1/2/3/4/5/6/7/8/9");
    ASSERT_EQ(m.kind, Kind::Found);
    EXPECT_EQ(m.params.size, 8u);
    EXPECT_EQ(m.params.get("g"), "7");
    EXPECT_EQ(m.params.get("h"), "8/9");
    EXPECT_THROW(r.add(Method::Get, "/:a/:b/:", 2), std::invalid_argument);
    EXPECT_EQ(get(r, "/1/2/3/4/5/6/7/"), 1);
}

TEST(Router, ManyRoutes) {
    Router r;
    const int n = 1000;
    for (int i = 0; i < n; ++i) {
        std::string s = std::to_string(i);
        r.add(Method::Get, "/r" + s, RouteId(i * 3));
        r.add(Method::Post, "/api/v" + std::to_string(i % 7) + "/item" + s + "/:id",
              RouteId(i * 3 + 1));
        r.add(Method::Get, "/static/" + s + "/*rest", RouteId(i * 3 + 2));
    }
    for (int i = 0; i < n; ++i) {
        std::string s = std::to_string(i);
        EXPECT_EQ(get(r, "/r" + s), i * 3) << i;
        std::string p = "/api/v" + std::to_string(i % 7) + "/item" + s + "/abc";
        auto m = r.find(Method::Post, p);
        ASSERT_EQ(m.kind, Kind::Found) << p;
        EXPECT_EQ(m.route, RouteId(i * 3 + 1));
        EXPECT_EQ(m.params.get("id"), "abc");
        std::string st = "/static/" + s + "/x/y";
        m = r.find(Method::Get, st);
        ASSERT_EQ(m.kind, Kind::Found) << st;
        EXPECT_EQ(m.route, RouteId(i * 3 + 2));
        EXPECT_EQ(m.params.get("rest"), "x/y");
    }
    EXPECT_EQ(get(r, "/r1000"), -1);
    EXPECT_EQ(get(r, "/r"), -1);
    EXPECT_EQ(get(r, "/r12", Method::Post), -2);
}

TEST(Router, MoveKeepsRoutes) {
    Router a;
    a.add(Method::Get, "/x/:id", 1);
    Router b(std::move(a));
    EXPECT_EQ(b.find(Method::Get, "/x/1").params.get("id"), "1");
    Router c;
    c = std::move(b);
    EXPECT_EQ(get(c, "/x/1"), 1);
}

// Parameterless patterns are found by their whole path before the tree is walked; what that
// finds must be what the walk finds, however later patterns reshape the tree.
TEST(Router, WholePathLookupAgreesWithTheWalk) {
    Router r;
    r.add(Method::Get, "/hello", 1);
    EXPECT_EQ(get(r, "/hello"), 1);
    // This splits the edge "/hello" ended on (into "/hel" and "lo"): its route end moves to a
    // new node. A pattern with a parameter does it here; "/p1" below does it with none.
    r.add(Method::Post, "/hel/:id", 2);
    EXPECT_EQ(get(r, "/hello"), 1);
    EXPECT_EQ(get(r, "/hel/9", Method::Post), 2);
    r.add(Method::Get, "/he", 3);
    r.add(Method::Get, "/help", 4);
    EXPECT_EQ(get(r, "/hello"), 1);
    EXPECT_EQ(get(r, "/he"), 3);
    EXPECT_EQ(get(r, "/help"), 4);
    EXPECT_EQ(get(r, "/hel"), -1);  // an interior node, no route of its own

    // The whole path's route end lacks the method: the walk goes on to the parameter.
    r.add(Method::Get, "/a/b", 5);
    r.add(Method::Post, "/a/:x", 6);
    EXPECT_EQ(get(r, "/a/b", Method::Post), 6);
    auto m = r.find(Method::Post, "/a/b");
    EXPECT_EQ(m.params.get("x"), "b");
    EXPECT_EQ(m.allowed, bits({Method::Post}));
    m = r.find(Method::Get, "/a/b");
    ASSERT_EQ(m.kind, Kind::Found);
    EXPECT_EQ(m.allowed, bits({Method::Get, Method::Head}));
    EXPECT_EQ(m.params.size, 0u);
    m = r.find(Method::Delete, "/a/b");
    ASSERT_EQ(m.kind, Kind::MethodNotAllowed);
    EXPECT_EQ(m.allowed, bits({Method::Get, Method::Head, Method::Post}));

    // HEAD: the GET of the whole path's route end, else whatever the walk finds further on.
    r.add(Method::Post, "/c/d", 7);
    r.add(Method::Get, "/c/:y", 8);
    EXPECT_EQ(get(r, "/a/b", Method::Head), 5);
    EXPECT_EQ(get(r, "/c/d", Method::Head), 8);

    // The same path for a second method is one entry; many paths grow the table.
    r.add(Method::Put, "/hello", 9);
    for (int i = 0; i < 200; ++i) r.add(Method::Get, "/p" + std::to_string(i), RouteId(100 + i));
    for (int i = 0; i < 200; ++i) EXPECT_EQ(get(r, "/p" + std::to_string(i)), 100 + i) << i;
    EXPECT_EQ(get(r, "/hello", Method::Put), 9);
    EXPECT_EQ(get(r, "/hello"), 1);
    EXPECT_EQ(get(r, "/p200"), -1);

    Router moved(std::move(r));
    EXPECT_EQ(get(moved, "/help"), 4);
}

// Paths of 8 bytes and more are hashed and compared a word at a time: a path of the same length
// that differs in any one byte is not the registered one.
TEST(Router, WholePathLookupComparesEveryByte) {
    Router r;
    const std::string paths[] = {"/", "/abcdefg", "/api/v1/users", "/api/v1/users/all",
                                 "/a-path-of-exactly-thirty-two-b"};
    RouteId id = 1;
    for (const std::string& p : paths) r.add(Method::Get, p, id++);
    r.add(Method::Get, "/api/:version/users", 50);  // the walk's answer for near misses
    id = 1;
    for (const std::string& p : paths) {
        EXPECT_EQ(get(r, p), long(id++)) << p;
        for (size_t i = 1; i < p.size(); ++i) {  // every byte but the leading '/'
            std::string near = p;
            near[i] = near[i] == 'x' ? 'y' : 'x';
            const long want = near == "/api/x1/users" || near == "/api/vx/users" ? 50 : -1;
            EXPECT_EQ(get(r, near), want) << near;
        }
    }
}

// What the table answers for HEAD, for an explicit HEAD route, for "/" and for a parameterless
// pattern registered after a parameter in the same place.
TEST(Router, WholePathLookupKeepsTheRulesAroundIt) {
    Router r;
    r.add(Method::Get, "/items/:id", 1);
    r.add(Method::Get, "/items/new", 2);  // after its parameter sibling: static still wins
    r.add(Method::Get, "/", 3);
    r.add(Method::Get, "/doc", 4);
    r.add(Method::Head, "/doc", 5);
    EXPECT_EQ(get(r, "/items/new"), 2);
    EXPECT_EQ(get(r, "/items/old"), 1);
    EXPECT_EQ(get(r, "/"), 3);
    EXPECT_EQ(get(r, "/", Method::Head), 3);
    EXPECT_EQ(get(r, "/doc", Method::Head), 5);
    EXPECT_EQ(get(r, "/doc"), 4);
    auto m = r.find(Method::Post, "/items/new");
    ASSERT_EQ(m.kind, Kind::MethodNotAllowed);
    EXPECT_EQ(m.allowed, bits({Method::Get, Method::Head}));
}
