#pragma once

#include <chrono>
#include <string>
#include <string_view>

namespace zerodrop {

using Duration = std::chrono::nanoseconds;

// Parses "1.5s", "300ms", "250us", "2m", "1h", "1m30s" or a bare number of seconds ("10").
// Throws Error naming `what` (e.g. "--duration") on anything else or on a negative value.
Duration parse_duration(std::string_view text, std::string_view what);

// Formats a duration the way parse_duration reads it, shortest exact unit first: "1.5s", "300ms".
std::string format_duration(Duration d);

// Seconds as a double, for printing and JSON.
constexpr double to_seconds(Duration d) { return std::chrono::duration<double>(d).count(); }

constexpr Duration from_seconds(double s) {
  return std::chrono::duration_cast<Duration>(std::chrono::duration<double>(s));
}

}  // namespace zerodrop
