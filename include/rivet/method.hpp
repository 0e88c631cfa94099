// rivet::Method: the request methods rivet knows by name; any other token is Method::Other
// (Request::method_name() has it as sent).
#pragma once

#include <cstdint>
#include <string_view>

namespace rivet {

enum class Method : uint8_t { Get, Head, Post, Put, Delete, Options, Patch, Trace, Connect, Other };

// "GET", "HEAD", ...; "OTHER" for Method::Other.
std::string_view method_name(Method m);

}  // namespace rivet
