#pragma once

#include <span>
#include <string>
#include <string_view>
#include <vector>

namespace zerodrop {

// The candidate closest to `word` by edit distance, or "" when none is close enough to suggest
// ("did you mean …?").
std::string closest_match(std::string_view word, std::span<const std::string_view> candidates);

// Splits on `sep`, keeping empty fields.
std::vector<std::string_view> split(std::string_view text, char sep);

std::string_view trim(std::string_view text);

// ASCII case folding, for HTTP header names, URL schemes, Kubernetes kinds and YAML words: bytes
// outside A-Z are kept as they are, whatever the locale. Inline: the response parser compares
// every header name of every response with these.
constexpr char ascii_lower(char c) {
  return c >= 'A' && c <= 'Z' ? static_cast<char>(c - 'A' + 'a') : c;
}

std::string ascii_lower(std::string_view text);

constexpr bool equals_ignore_case(std::string_view a, std::string_view b) {
  if (a.size() != b.size()) {
    return false;
  }
  for (size_t i = 0; i < a.size(); ++i) {
    if (ascii_lower(a[i]) != ascii_lower(b[i])) {
      return false;
    }
  }
  return true;
}

}  // namespace zerodrop
