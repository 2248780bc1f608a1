#pragma once

#include <array>
#include <cstddef>
#include <optional>
#include <string_view>

namespace zerodrop {

// The value of an enum numbered 0..N-1 whose name in `names` (indexed by value) is `text`;
// nullopt when none is. Each table of names sits beside its enum, with a static_assert that it
// holds one name per value, and the enum's to_string indexes it.
template <typename E, size_t N>
constexpr std::optional<E> enum_from_name(const std::array<std::string_view, N>& names,
                                          std::string_view text) {
  for (size_t i = 0; i < N; ++i) {
    if (names[i] == text) {
      return static_cast<E>(i);
    }
  }
  return std::nullopt;
}

}  // namespace zerodrop
