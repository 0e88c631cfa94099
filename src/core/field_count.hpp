// The number of fields of a flat aggregate, at compile time: lets a conversion between two
// structs that must stay alike (the public rivet::Limits and the engine's) refuse to compile when
// a field is added to one side and not copied.
#pragma once

#include <cstddef>

namespace rivet::core {

namespace field_count_detail {

// Converts to any field type, so that T{AnyField{}, ...} compiles while there are fields left.
struct AnyField {
    template <typename T>
    constexpr operator T() const noexcept;  // never defined: only used in unevaluated context
};

template <typename T, typename... Fields>
consteval size_t count() {
    if constexpr (requires { T{Fields{}..., AnyField{}}; })
        return count<T, Fields..., AnyField>();
    else
        return sizeof...(Fields);
}

}  // namespace field_count_detail

// How many initializers T's brace initialization takes: its field count, for an aggregate whose
// fields are not themselves aggregates (brace elision would count their members instead).
template <typename T>
inline constexpr size_t field_count = field_count_detail::count<T>();

}  // namespace rivet::core
