#include "sim/workload_options.h"

#include <regex>

#include <fmt/format.h>

#include "base/error.h"
#include "kube/label_selector.h"
#include "kube/pre_stop.h"
#include "kube/serving.h"

namespace zerodrop::sim {

namespace {

// Istio's and Envoy's proxy containers, by name or image (Linkerd's proxy drains otherwise: not
// read as one).
bool is_envoy_proxy(const kube::Container& c) {
  return c.name == "istio-proxy" || c.name == "envoy"
         || c.image.find("proxyv2") != std::string::npos
         || c.image.find("envoyproxy/envoy") != std::string::npos;
}

std::string env_of(const kube::Container& c, std::string_view name) {
  for (const auto& [key, value] : c.env) {
    if (key == name) {
      return value;
    }
  }
  return "";
}

// The proxy's drain from its env (pilot-agent's TERMINATION_DRAIN_DURATION_SECONDS,
// EXIT_ON_ZERO_ACTIVE_CONNECTIONS, MINIMUM_DRAIN_DURATION) and the pod's proxy.istio.io/config
// annotation (terminationDrainDuration), each where the manifest says it.
void read_sidecar(kube::SidecarProxy& proxy, const kube::Workload& w, const kube::Container& c) {
  proxy.order = c.sidecar ? kube::SidecarOrder::native : kube::SidecarOrder::plain;
  auto config = w.pod_annotations.find("proxy.istio.io/config");
  std::smatch m;
  static const std::regex drain(R"(terminationDrainDuration:\s*["']?([0-9.]+[a-z]*))");
  if (config != w.pod_annotations.end() && std::regex_search(config->second, m, drain)) {
    proxy.termination_drain = parse_duration(m[1].str(), "proxy.istio.io/config");
  }
  if (std::string s = env_of(c, "TERMINATION_DRAIN_DURATION_SECONDS"); !s.empty()) {
    proxy.termination_drain = parse_duration(s + "s", "TERMINATION_DRAIN_DURATION_SECONDS");
  }
  proxy.exit_on_zero_active_connections = env_of(c, "EXIT_ON_ZERO_ACTIVE_CONNECTIONS") == "true";
  if (std::string s = env_of(c, "MINIMUM_DRAIN_DURATION"); !s.empty()) {
    proxy.minimum_drain = parse_duration(s, "MINIMUM_DRAIN_DURATION");
  }
}

}  // namespace

std::optional<Protocol> service_protocol(const std::vector<kube::Object>& objects,
                                         const kube::Workload& w) {
  for (const kube::Object& object : objects) {
    const auto* s = std::get_if<kube::Service>(&object);
    if (!s || !kube::map_selects(s->selector, w.pod_labels)) {
      continue;
    }
    for (const kube::ServicePort& port : s->ports) {
      const std::string& p = port.app_protocol;
      if (p.find("grpc") != std::string::npos) {
        return Protocol::grpc;
      }
      if (p == "kubernetes.io/h2c" || p == "h2c" || p == "http2") {
        return Protocol::h2;
      }
      if (!p.empty()) {
        return Protocol::http1;
      }
    }
  }
  return std::nullopt;
}

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
  options.sidecar = {};
  for (const kube::Container& k : w.containers) {
    if (&k != &c && is_envoy_proxy(k)) {
      read_sidecar(options.sidecar, w, k);
      break;
    }
  }
  options.scenario.extra["workload"] = fmt::format("{}/{}", kube::to_string(w.kind), w.meta.name);
  options.scenario.container = c.name;
  return unknown;
}

}  // namespace zerodrop::sim
