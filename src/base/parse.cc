#include "base/parse.h"

#include <charconv>
#include <cmath>
#include <string>

#include <fmt/format.h>

#include "base/error.h"
#include "base/int_or_percent.h"

namespace zerodrop {

double parse_number(std::string_view text, std::string_view what) {
  double value = 0;
  auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), value);
  if (text.empty() || ec != std::errc() || end != text.data() + text.size()
      || !std::isfinite(value)) {
    throw Error(fmt::format("{}: expected a number, got '{}'", what, text));
  }
  return value;
}

int64_t parse_integer(std::string_view text, std::string_view what, int64_t min, int64_t max) {
  int64_t value = 0;
  auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), value);
  if (text.empty() || ec != std::errc() || end != text.data() + text.size()) {
    throw Error(fmt::format("{}: expected a whole number, got '{}'", what, text));
  }
  if (value < min || value > max) {
    throw Error(fmt::format("{}: expected a number from {} to {}, got '{}'", what, min, max, text));
  }
  return value;
}

double parse_share(std::string_view text, std::string_view what) {
  double value = -1;
  if (!text.empty() && text.back() == '%') {
    std::string_view digits = text.substr(0, text.size() - 1);
    auto [end, ec] = std::from_chars(digits.data(), digits.data() + digits.size(), value);
    value =
        ec == std::errc() && end == digits.data() + digits.size() && !digits.empty() ? value : -1;
  }
  if (!(value >= 0 && value <= 100)) {
    throw Error(fmt::format("{}: expected a percentage from 0% to 100%, got '{}'", what, text));
  }
  return value / 100;
}

int64_t parse_int_or_percent(std::string_view text, std::string_view what, int64_t total,
                             Round round) {
  return IntOrPercent::parse(text, what).resolve(total, round);
}

}  // namespace zerodrop
