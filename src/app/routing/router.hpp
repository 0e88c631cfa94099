// Router: maps (method, path) to a route with a radix tree of path segments.
//
// Patterns: static segments ("/users/list"), named parameters ("/users/:id", one whole segment),
// constrained parameters ("/users/:id<int>", "/items/:sku([A-Z]{3}-\d+)", see below), and a final
// wildcard ("/files/*path", the rest of the path, possibly empty, without the leading slash).
// At every level the search tries, whatever the order of registration:
//   static > constrained parameter > plain parameter > wildcard
// and a branch that fails (its segment does not satisfy the constraint, or nothing below it
// matches) falls through to the next. Lookups allocate nothing on static, plain-parameter and
// typed branches (a regular expression may); parameters are views into the looked-up path.
//
// Constraints, written right after the name (app/routing/route_constraint.hpp):
// - <int>: an optional '-' and decimal digits fitting int64; <uint>: digits fitting uint64;
//   <hex>: one or more hex digits; <uuid>: 8-4-4-4-12 hex digits.
// - (expression): an ECMAScript regular expression matched against the whole segment, compiled
//   once in add(); its parentheses must balance ("\(" and those inside [...] do not count);
//   no back-references; a segment over RouteConstraint::kMaxPatternSegment bytes never matches.
// - Siblings with the same constraint spelled the same share a branch; different constraints
//   are different branches, tried narrowest type first (uuid, uint, int, hex), then
//   expressions in registration order. So "/items/:id<int>" and "/items/:slug" coexist: "/items/42"
//   takes the first, "/items/abc" the second; with no plain sibling "/items/abc" is a 404.
// - A wildcard takes no constraint.
//
// Matching rules:
// - Trailing slashes are exact: "/hello/" and "/hello" are different routes.
// - A parameter matches one non-empty segment: "/users/:id" does not match "/users/".
// - "/files/*path" matches "/files/" (path "") and "/files/a/b" (path "a/b"), not "/files".
// - ':' and '*' are special only at the start of a segment ("/v1/x:run" is static); parameter
//   names are [A-Za-z0-9_]+ and unique within a pattern. Patterns with different parameter names
//   but the same shape ("/u/:id", "/u/:name") share one tree node, so the same method on both is
//   a duplicate; different methods may use different names.
// - When a higher-priority branch matches the path but has no route for the method, the search
//   backtracks: GET "/a/b/c" and POST "/a/:x/d" give POST "/a/b/d" the second route.
// - A 405's Allow lists the methods of every route end the path reaches: a constrained branch
//   whose constraint the segment fails is not reached, so it adds nothing.
// - HEAD is served by the GET route of the first (highest-priority) route end that has either.
//
// A path that is a whole pattern without parameters ("/hello") is looked up in a hash table of
// those first; the tree is walked when it is not there or its route end lacks the method.
#pragma once

#include <cstdint>
#include <memory>
#include <stdexcept>
#include <string>
#include <string_view>
#include <vector>

#include "http/request_parser.hpp"

namespace rivet::app {

using http::Method;

// Route parameters of one match: (name, value) views; name without ':' or '*'. Only the first
// `size` entries are set: the rest are left as they were, since clearing all 256 bytes on every
// request (twice: the caller's Match and find's) was 3% of a pipelined /hello.
struct RouteParams {
    static constexpr size_t kMax = 8;
    RouteParams() noexcept {}  // leaves names and values unset
    union {
        std::string_view names[kMax];
    };
    union {
        std::string_view values[kMax];
    };
    size_t size = 0;

    std::string_view get(std::string_view name) const {
        for (size_t i = 0; i < size; ++i)
            if (names[i] == name) return values[i];
        return {};
    }
};

// Bit set of methods, for the Allow header of a 405.
using MethodSet = uint16_t;
constexpr MethodSet method_bit(Method m) {
    return MethodSet(1u << static_cast<unsigned>(m));
}

// The router stores route ids; the App keeps the handlers in a vector indexed by them.
using RouteId = uint32_t;

class Router {
public:
    struct Match {
        enum Kind : uint8_t { Found, NotFound, MethodNotAllowed } kind = NotFound;
        RouteId route = 0;  // Found
        // MethodNotAllowed: the methods of every route end matching the path (the Allow header).
        // Found: the methods of the matched route end only. Both include HEAD when GET is there.
        MethodSet allowed = 0;
        RouteParams params;  // Found; views into the path (values) and the router (names)
    };

    Router();
    ~Router();
    Router(Router&&) noexcept;
    Router& operator=(Router&&) noexcept;

    // Registers `route` for `method` on `pattern`. Throws std::invalid_argument on a malformed
    // pattern (no leading '/', empty or invalid parameter name, wildcard not last, more than
    // RouteParams::kMax parameters and wildcard together, a control byte anywhere, a space, '?'
    // or '#' outside an expression, an unknown <type>, an expression std::regex refuses or
    // whose parentheses do not balance, a constrained wildcard) or on a duplicate (method,
    // pattern); the message names the pattern. The router is unchanged then (in what it
    // matches). The id ~0u is reserved.
    void add(Method method, std::string_view pattern, RouteId route);

    // Looks up `path` (already percent-decoded by the caller, or not: the router does not care).
    // A HEAD request falls back to the GET route when no HEAD route exists.
    Match find(Method method, std::string_view path) const;
    // The same, into `out` (whose params a Request may already show): no copy of the Match.
    void find(Method method, std::string_view path, Match& out) const;

private:
    struct Node;
    struct Search;
    struct ExactPaths;
    std::unique_ptr<Node> root_;
    // The route ends of patterns without parameters, by their whole path: what the walk would
    // reach first (static edges are tried first at every level), found with one hash lookup.
    std::unique_ptr<ExactPaths> exact_;
};

}  // namespace rivet::app
