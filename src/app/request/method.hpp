// The public rivet::Method and the parser's http::Method are the same list in the same order (the
// protocol layer cannot include the public API); these convert between them for free.
#pragma once

#include <rivet/method.hpp>

#include "http/request_parser.hpp"

namespace rivet::app {

#define RIVET_SAME_METHOD(name) \
    static_assert(static_cast<int>(rivet::Method::name) == static_cast<int>(http::Method::name))
RIVET_SAME_METHOD(Get);
RIVET_SAME_METHOD(Head);
RIVET_SAME_METHOD(Post);
RIVET_SAME_METHOD(Put);
RIVET_SAME_METHOD(Delete);
RIVET_SAME_METHOD(Options);
RIVET_SAME_METHOD(Patch);
RIVET_SAME_METHOD(Trace);
RIVET_SAME_METHOD(Connect);
RIVET_SAME_METHOD(Other);
#undef RIVET_SAME_METHOD

constexpr rivet::Method public_method(http::Method m) {
    return static_cast<rivet::Method>(m);
}
constexpr http::Method protocol_method(rivet::Method m) {
    return static_cast<http::Method>(m);
}

}  // namespace rivet::app
