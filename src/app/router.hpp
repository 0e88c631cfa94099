// Router: maps (method, path) to a route with a radix tree of path segments.
//
// Patterns: static segments ("/users/list"), named parameters ("/users/:id", one whole segment),
// and a final wildcard ("/files/*path", the rest of the path, possibly empty, without the leading
// slash). Static beats parameter beats wildcard at every level, whatever the order of
// registration. Lookups allocate nothing: parameters are views into the looked-up path.
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

// Route parameters of one match: (name, value) views; name without ':' or '*'.
struct RouteParams {
    static constexpr size_t kMax = 8;
    std::string_view names[kMax];
    std::string_view values[kMax];
    size_t size = 0;

    std::string_view get(std::string_view name) const {
        for (size_t i = 0; i < size; ++i)
            if (names[i] == name) return values[i];
        return {};
    }
};

// Bit set of methods, for the Allow header of a 405.
using MethodSet = uint16_t;
constexpr MethodSet method_bit(Method m) { return MethodSet(1u << static_cast<unsigned>(m)); }

// The router stores route ids; the App keeps the handlers in a vector indexed by them.
using RouteId = uint32_t;

class Router {
public:
    struct Match {
        enum Kind : uint8_t { Found, NotFound, MethodNotAllowed } kind = NotFound;
        RouteId route = 0;               // Found
        MethodSet allowed = 0;           // MethodNotAllowed (and Found): methods the path has
        RouteParams params;              // Found
    };

    Router();
    ~Router();
    Router(Router&&) noexcept;
    Router& operator=(Router&&) noexcept;

    // Registers `route` for `method` on `pattern`. Throws std::invalid_argument on a malformed
    // pattern (no leading '/', empty parameter name, wildcard not last, more than
    // RouteParams::kMax parameters) or on a duplicate (method, pattern).
    void add(Method method, std::string_view pattern, RouteId route);

    // Looks up `path` (already percent-decoded by the caller, or not: the router does not care).
    // A HEAD request falls back to the GET route when no HEAD route exists.
    Match find(Method method, std::string_view path) const;

private:
    struct Node;
    std::unique_ptr<Node> root_;
};

}  // namespace rivet::app
