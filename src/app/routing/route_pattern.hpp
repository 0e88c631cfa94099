// Route patterns ("/users/:id<int>/files/*rest") split into static runs, parameters and the
// final wildcard, and checked, for the Router (router.hpp says what a pattern may be).
#pragma once

#include <cstddef>
#include <cstdint>
#include <memory>
#include <string_view>
#include <vector>

#include "app/routing/route_constraint.hpp"

namespace rivet::app::route_pattern {

// One piece of a parsed pattern: a static byte run, a parameter, or the final wildcard.
struct Token {
    enum Kind : uint8_t { Static, Param, Wildcard } kind;
    std::string_view text;  // the bytes for Static, the name for Param and Wildcard
    std::unique_ptr<RouteConstraint> constraint = nullptr;  // a constrained Param's
};

// Splits and validates the whole pattern, so that the router can refuse it before its tree is
// touched: at most `max_params` parameters and wildcard together. Throws std::invalid_argument
// naming the pattern and what is wrong with it.
std::vector<Token> tokenize(std::string_view pattern, size_t max_params);

}  // namespace rivet::app::route_pattern
