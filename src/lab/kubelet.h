#pragma once

#include <chrono>

#include "base/duration.h"

namespace zerodrop::lab {

// kubelet's killContainer() arithmetic (pkg/kubelet/kuberuntime/kuberuntime_container.go).

// kubelet's minimumGracePeriodInSeconds: the stop signal is never followed by SIGKILL sooner.
inline constexpr Duration kMinimumStopGrace = std::chrono::seconds(2);

// Whether the preStop hook runs at all: only with a grace period above zero.
constexpr bool runs_prestop(Duration grace) {
  return grace > Duration(0);
}

// Whole seconds, truncated, as executePreStopHook() returns int64(time.Since(start).Seconds()).
constexpr Duration whole_seconds(Duration d) {
  return std::chrono::duration_cast<std::chrono::seconds>(d);
}

// The time between the stop signal and SIGKILL once a preStop hook ran for `prestop_spent`
// (zero when there is none): max(2 s, grace - whole seconds of min(spent, grace)).
constexpr Duration kill_delay(Duration grace, Duration prestop_spent,
                              Duration minimum = kMinimumStopGrace) {
  Duration spent = prestop_spent < grace ? prestop_spent : grace;
  Duration left = grace - whole_seconds(spent);
  return left > minimum ? left : minimum;
}

}  // namespace zerodrop::lab
