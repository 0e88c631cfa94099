// RouteConstraint: what a constrained route parameter accepts of its segment.
//
//   /items/:id<int>    an optional '-' and decimal digits that fit an int64
//   /items/:id<uint>   decimal digits that fit a uint64
//   /blobs/:sum<hex>   one or more hex digits, any case, any length
//   /users/:id<uuid>   8-4-4-4-12 hex digits, any case
//   /items/:id(\d+)    a regular expression (ECMAScript) matched against the whole segment
//
// The router keeps one branch per distinct constraint (same spelling, same branch) and tries
// them in `Kind` order: the narrower types first, then expressions in registration order.
#pragma once

#include <cstddef>
#include <cstdint>
#include <memory>
#include <regex>
#include <string>
#include <string_view>

namespace rivet::app {

class RouteConstraint {
public:
    // The order the router tries sibling constraints in: narrowest first ("42" is a uint, an
    // int and hex: the uint branch wins), expressions last (nothing tells which is narrower).
    enum class Kind : uint8_t { Uuid, Uint, Int, Hex, Pattern };

    // A segment longer than this never satisfies an expression: it bounds the time one
    // lookup can spend in std::regex (linear in the length, see route_constraint.cpp).
    static constexpr size_t kMaxPatternSegment = 1024;

    // `spec` is the constraint as written after the name, brackets included: "<int>" or
    // "(\d+)". Throws std::invalid_argument (the reason only: the router adds the pattern) for
    // an unknown type or an expression std::regex refuses.
    explicit RouteConstraint(std::string_view spec);

    bool matches(std::string_view segment) const;
    Kind kind() const { return kind_; }
    const std::string& spec() const { return spec_; }

    // Where the constraint that opens at p[at] ('<' or '(') ends: one past its closing
    // bracket. Parentheses must balance; "\(" and those inside "[...]" do not count. Throws
    // std::invalid_argument (the reason only) when it does not close.
    static size_t end_of(std::string_view p, size_t at);

private:
    Kind kind_;
    std::string spec_;
    std::unique_ptr<const std::regex> regex_;  // Pattern only
};

}  // namespace rivet::app
