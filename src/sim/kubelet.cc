#include "sim/kubelet.h"

#include <algorithm>
#include <cmath>

namespace zerodrop::sim {

StopTimes stop_times(double grace, double prestop) {
  constexpr double kMinimumGrace = 2;  // minimumGracePeriodInSeconds
  StopTimes t;
  t.prestop_run = prestop > 0 && grace > 0;
  double spent = t.prestop_run ? std::min(prestop, grace) : 0;
  t.prestop_cut = t.prestop_run && prestop >= grace;
  t.term = spent;
  // executePreStopHook returns int64(time.Since(start).Seconds()): truncated whole seconds.
  double remaining = grace - std::floor(spent);
  t.kill = t.term + std::max(kMinimumGrace, remaining);
  return t;
}

}  // namespace zerodrop::sim
