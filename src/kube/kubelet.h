#pragma once

#include <chrono>

#include "base/duration.h"

namespace zerodrop::kube {

// The kubelet's killContainer() arithmetic (pkg/kubelet/kuberuntime/kuberuntime_container.go),
// shared by the lab (which runs it on real processes) and the sim (in virtual time).

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

// When the kubelet sends the stop signal and SIGKILL, from the moment it starts terminating the
// container, for a preStop hook that would run for `prestop` (zero: no hook).
struct StopTimes {
  Duration term{0};           // the stop signal
  Duration kill{0};           // SIGKILL if the process still runs
  bool prestop_runs = false;  // a hook ran (only with a grace period above zero)
  bool prestop_cut = false;   // the hook still ran when the grace period ran out
};

// The hook runs only when grace > 0 and is cut at grace; TERM when it ends; KILL kill_delay()
// after TERM.
constexpr StopTimes stop_times(Duration grace, Duration prestop) {
  StopTimes t;
  t.prestop_runs = prestop > Duration(0) && runs_prestop(grace);
  Duration spent = !t.prestop_runs ? Duration(0) : prestop < grace ? prestop : grace;
  t.prestop_cut = t.prestop_runs && prestop >= grace;
  t.term = spent;
  t.kill = spent + kill_delay(grace, spent);
  return t;
}

// The prober's liveness arithmetic (pkg/kubelet/prober/worker.go): from the first failed probe,
// the container is killed at its failureThreshold-th consecutive failure, periodSeconds apart,
// the last one failing when its timeoutSeconds run out.
constexpr Duration liveness_kill_window(Duration period, int64_t failure_threshold,
                                        Duration timeout) {
  return period * (failure_threshold > 1 ? failure_threshold - 1 : 0) + timeout;
}

}  // namespace zerodrop::kube
