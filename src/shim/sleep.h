#pragma once

#include <chrono>
#include <optional>
#include <string_view>

namespace zerodrop::shim {

// Sleeps for `duration`, returning 0; SIGTERM or SIGINT end it early with 128+signal (also as
// PID 1, where default dispositions would ignore them). Uses only libc: `zerodrop-sleep` is
// linked from it statically.
int sleep_for(std::chrono::nanoseconds duration);

// "10", "1.5", "300ms", "2s", "1m": a non-negative number with an optional unit (s default).
// nullopt when malformed. Used by zerodrop-sleep, which links neither fmt nor the base library.
std::optional<std::chrono::nanoseconds> parse_sleep_duration(std::string_view text);

}  // namespace zerodrop::shim
