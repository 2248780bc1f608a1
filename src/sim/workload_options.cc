#include "sim/workload_options.h"

#include <fmt/format.h>

#include "base/error.h"
#include "base/parse.h"

namespace zerodrop::sim {
namespace {

const kube::Container& pick(const kube::Workload& w, const std::string& name) {
  for (const kube::Container& c : w.containers) {
    if (!c.sidecar && (name.empty() || c.name == name)) {
      return c;
    }
  }
  throw Error(name.empty() ? fmt::format("{}: {} '{}' has no container", w.meta.file,
                                         kube::to_string(w.kind), w.meta.name)
                           : fmt::format("{}: {} '{}' has no container '{}'", w.meta.file,
                                         kube::to_string(w.kind), w.meta.name, name));
}

// Seconds a preStop delays the stop signal: native sleep, or `exec: [sleep, N]` /
// `[sh, -c, "sleep N"]`; other hooks count as 0 (their duration is unknown).
double prestop_seconds(const kube::Handler& h) {
  if (h.kind == kube::HandlerKind::sleep) {
    return static_cast<double>(h.sleep_seconds);
  }
  if (h.kind != kube::HandlerKind::exec || h.command.empty()) {
    return 0;
  }
  std::string last = h.command.back();
  auto at = last.rfind("sleep ");
  std::string number = at != std::string::npos ? last.substr(at + 6)
                       : h.command.size() >= 2 && h.command[h.command.size() - 2].ends_with("sleep")
                           ? last
                           : "";
  try {
    return number.empty() ? 0 : parse_number(number, "preStop");
  } catch (const Error&) {
    return 0;
  }
}

}  // namespace

void apply_workload(Options& options, const kube::Workload& w, const std::string& container) {
  if (w.strategy.type == "Recreate" || w.strategy.type == "OnDelete") {
    throw Error(
        fmt::format("{}: strategy {} is not a rolling update; the simulator rolls "
                    "RollingUpdate only",
                    w.meta.file, w.strategy.type));
  }
  if (w.replicas) {
    options.replicas = static_cast<int>(*w.replicas);
  }
  if (w.strategy.max_surge) {
    options.max_surge = w.strategy.max_surge->to_string();
  }
  if (w.strategy.max_unavailable) {
    options.max_unavailable = w.strategy.max_unavailable->to_string();
  }
  options.grace = static_cast<double>(w.grace_seconds());
  const kube::Container& c = pick(w, container);
  options.prestop = c.pre_stop ? prestop_seconds(*c.pre_stop) : 0;
  if (c.readiness_probe) {
    const kube::Probe& probe = *c.readiness_probe;
    options.readiness =
        probe.handler.kind == kube::HandlerKind::tcp_socket ? Readiness::lies : Readiness::probed;
    options.readiness_period = static_cast<double>(probe.period_seconds);
  } else {
    options.readiness = Readiness::lies;  // no probe: Ready as soon as the container runs
    options.readiness_period = 1;
  }
  options.scenario["workload"] = fmt::format("{}/{}", kube::to_string(w.kind), w.meta.name);
  options.scenario["container"] = c.name;
}

}  // namespace zerodrop::sim
