#include "sim/workload_options.h"

#include <fmt/format.h>

#include "kube/pre_stop.h"
#include "kube/serving.h"

namespace zerodrop::sim {

std::optional<std::string> apply_workload(Options& options, const kube::Workload& w,
                                          const std::string& container) {
  kube::require_rolling_update(w);
  const kube::Container& c = kube::serving_container(w, container);
  if (w.replicas) {
    options.replicas = static_cast<int>(*w.replicas);
  }
  if (w.strategy.max_surge) {
    options.max_surge = *w.strategy.max_surge;
  }
  if (w.strategy.max_unavailable) {
    options.max_unavailable = *w.strategy.max_unavailable;
  }
  options.min_ready = static_cast<double>(w.min_ready_seconds);
  options.grace = static_cast<double>(w.grace_seconds());
  std::optional<std::string> unknown;
  if (!c.pre_stop) {
    options.prestop = 0;
  } else {
    kube::PreStopDelay delay = kube::pre_stop_delay(*c.pre_stop);
    if (delay.delay) {
      options.prestop = to_seconds(*delay.delay);
    } else {
      unknown = fmt::format(
          "{}: preStop {} of container '{}' runs for a time the manifest does "
          "not tell",
          kube::where(w.meta.file, c.marks.at("lifecycle.preStop")), delay.how, c.name);
    }
  }
  if (c.liveness_probe) {
    const kube::Probe& probe = *c.liveness_probe;
    options.liveness = LivenessProbe{static_cast<double>(probe.period_seconds),
                                     static_cast<int>(probe.failure_threshold),
                                     static_cast<double>(probe.timeout_seconds)};
  } else {
    options.liveness.reset();
  }
  if (c.readiness_probe) {
    const kube::Probe& probe = *c.readiness_probe;
    options.readiness =
        probe.handler.kind == kube::HandlerKind::tcp_socket ? Readiness::lies : Readiness::probed;
    options.readiness_period = static_cast<double>(probe.period_seconds);
  } else {
    options.readiness = Readiness::lies;  // no probe: Ready as soon as the container runs
    options.readiness_period = 1;
  }
  options.scenario.extra["workload"] = fmt::format("{}/{}", kube::to_string(w.kind), w.meta.name);
  options.scenario.container = c.name;
  return unknown;
}

}  // namespace zerodrop::sim
