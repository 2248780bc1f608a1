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
// outside A-Z are kept as they are, whatever the locale.
char ascii_lower(char c);
std::string ascii_lower(std::string_view text);
bool equals_ignore_case(std::string_view a, std::string_view b);

}  // namespace zerodrop
