#pragma once

#include <optional>

namespace zerodrop::sim {

// When the kubelet sends the stop signal and SIGKILL, measured from the moment it starts
// terminating the container (reference §1.2, killContainer()).
struct StopTimes {
  double term = 0;  // stop signal
  double kill = 0;  // SIGKILL if the process is still running
  bool prestop_run = false;
  bool prestop_cut = false;  // the hook was still running when the grace period ran out
};

// kubelet arithmetic for grace period T and a preStop hook lasting P seconds (0 = no hook):
// the hook runs only when T > 0; TERM at min(P, T); KILL after max(2, T - floor(min(P, T)))
// (whole seconds charged, truncated); if P >= T, TERM at T and KILL at T + 2.
StopTimes stop_times(double grace, double prestop);

}  // namespace zerodrop::sim
