#pragma once

#include <string_view>

namespace zerodrop::lifecycle {

// The shutdown states, in the only order they are entered.
//   serving  : ready, accepting, keep-alive allowed
//   unready  : a stop signal arrived; readiness fails, still accepting and serving while the
//              routers catch up; responses carry `Connection: close`
//   draining : the delay is over; stop accepting, close idle connections, finish in-flight work
//   stopped  : drained, or the hard deadline passed; close resources and exit
enum class State { serving, unready, draining, stopped };

// Why the machine stopped.
enum class StopReason { none, drained, deadline };

// How a tracked connection ended during shutdown (for the "closed by drain" counters).
enum class CloseReason { client, idle_by_drain, after_response };

constexpr std::string_view to_string(State s) {
  switch (s) {
    case State::serving:
      return "serving";
    case State::unready:
      return "unready";
    case State::draining:
      return "draining";
    case State::stopped:
      return "stopped";
  }
  return "unknown";
}

constexpr std::string_view to_string(StopReason r) {
  switch (r) {
    case StopReason::none:
      return "none";
    case StopReason::drained:
      return "drained";
    case StopReason::deadline:
      return "deadline";
  }
  return "unknown";
}

}  // namespace zerodrop::lifecycle
