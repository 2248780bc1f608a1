#include "base/duration.h"

#include <cmath>
#include <cstdlib>

#include <fmt/format.h>

#include "base/error.h"

namespace zerodrop {
namespace {

// Nanoseconds per unit; longest suffixes first so that "ms" is not read as "m".
struct Unit {
  std::string_view suffix;
  double nanos;
};
constexpr Unit kUnits[] = {{"ms", 1e6}, {"us", 1e3}, {"µs", 1e3}, {"ns", 1.0},
                           {"h", 3600e9}, {"m", 60e9}, {"s", 1e9}};

[[noreturn]] void bad(std::string_view text, std::string_view what) {
  throw Error(fmt::format("{}: expected a duration like 1.5s, 300ms or 2m, got '{}'", what, text));
}

}  // namespace

Duration parse_duration(std::string_view text, std::string_view what) {
  if (text.empty()) {
    bad(text, what);
  }
  double total = 0;
  std::string_view rest = text;
  while (!rest.empty()) {
    std::string number_text(rest);
    char* end = nullptr;
    double value = std::strtod(number_text.c_str(), &end);
    size_t used = static_cast<size_t>(end - number_text.c_str());
    if (used == 0 || !std::isfinite(value) || value < 0 || number_text[0] == '+' ||
        number_text[0] == '-') {
      bad(text, what);
    }
    rest.remove_prefix(used);
    if (rest.empty()) {
      if (used != text.size()) {  // "1m30" is ambiguous
        bad(text, what);
      }
      total += value * 1e9;
      break;
    }
    bool matched = false;
    for (const Unit& unit : kUnits) {
      if (rest.starts_with(unit.suffix)) {
        total += value * unit.nanos;
        rest.remove_prefix(unit.suffix.size());
        matched = true;
        break;
      }
    }
    if (!matched) {
      bad(text, what);
    }
  }
  if (total > 1e18) {
    bad(text, what);
  }
  return Duration(static_cast<Duration::rep>(std::llround(total)));
}

std::string format_duration(Duration d) {
  auto ns = d.count();
  if (ns == 0) {
    return "0s";
  }
  if (ns % 1'000'000'000 == 0) {
    return fmt::format("{}s", ns / 1'000'000'000);
  }
  if (ns % 1'000'000 == 0 && ns < 1'000'000'000) {
    return fmt::format("{}ms", ns / 1'000'000);
  }
  if (ns >= 1'000'000'000) {
    return fmt::format("{:g}s", static_cast<double>(ns) / 1e9);
  }
  if (ns >= 1'000'000) {
    return fmt::format("{:g}ms", static_cast<double>(ns) / 1e6);
  }
  if (ns % 1000 == 0) {
    return fmt::format("{}us", ns / 1000);
  }
  return fmt::format("{}ns", ns);
}

}  // namespace zerodrop
