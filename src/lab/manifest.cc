#include "lab/manifest.h"

#include <fmt/format.h>

#include "base/error.h"
#include "base/subprocess.h"
#include "kube/serving.h"
#include "kube/workload.h"

namespace zerodrop::lab {
namespace {

HookSpec hook_of(const kube::Handler& h, const std::string& path) {
  HookSpec hook;
  switch (h.kind) {
    case kube::HandlerKind::sleep:
      hook.kind = HookSpec::Kind::sleep;
      hook.sleep = std::chrono::seconds(h.sleep_seconds);
      return hook;
    case kube::HandlerKind::exec:
      hook.kind = HookSpec::Kind::exec;
      hook.command = h.command;
      return hook;
    case kube::HandlerKind::http_get:
      hook.kind = HookSpec::Kind::http;
      hook.path = h.path.empty() ? "/" : h.path;
      return hook;
    default:
      throw Error(
          fmt::format("{}: preStop {} is not supported by the lab", path, kube::to_string(h.kind)));
  }
}

ProbeSpec probe_of(const kube::Probe& p, const kube::Container& c, const std::string& path) {
  ProbeSpec probe;
  switch (p.handler.kind) {
    case kube::HandlerKind::http_get:
      probe.kind = ProbeSpec::Kind::http;
      probe.path = p.handler.path.empty() ? "/" : p.handler.path;
      break;
    case kube::HandlerKind::tcp_socket:
      probe.kind = ProbeSpec::Kind::tcp;
      break;
    case kube::HandlerKind::exec:
      probe.kind = ProbeSpec::Kind::exec;
      probe.command = p.handler.command;
      break;
    case kube::HandlerKind::grpc:
      // Kubernetes takes port numbers only here. The container's own port is the pod's port,
      // which the lab may have chosen (--port 0); another one is probed as written.
      probe.kind = ProbeSpec::Kind::grpc;
      probe.service = p.handler.path;
      if (c.ports.empty() || p.handler.port.number != c.ports.front().container_port) {
        probe.port = static_cast<uint16_t>(p.handler.port.number);
      }
      break;
    default:
      throw Error(fmt::format("{}: {} probes are not supported by the lab", path,
                              kube::to_string(p.handler.kind)));
  }
  probe.initial_delay = std::chrono::seconds(p.initial_delay_seconds);
  probe.period = std::chrono::seconds(p.period_seconds);
  probe.timeout = std::chrono::seconds(p.timeout_seconds);
  probe.success_threshold = static_cast<int>(p.success_threshold);
  probe.failure_threshold = static_cast<int>(p.failure_threshold);
  return probe;
}

kube::Workload workload_of(const std::string& path) {
  std::optional<kube::Workload> found = kube::first_workload(path);
  if (!found) {
    throw Error(fmt::format("{}: no Deployment, StatefulSet or other workload found", path));
  }
  return *found;
}

// `spec` runs the image of `c` as Kubernetes would; the manifest's stopSignal wins over the
// image's.
void set_image(ContainerSpec& spec, PodSpec& pod, const kube::Container& c,
               const std::string& path) {
  if (c.image.empty()) {
    throw Error(fmt::format("{}: container {} has no image to run", path, c.name));
  }
  spec.image = c.image;
  spec.command = c.command;
  spec.args = c.args;
  spec.user = c.run_as_user;
  if (!c.stop_signal.empty()) {
    std::optional<int> signal = signal_from_name(c.stop_signal);
    if (!signal) {
      throw Error(fmt::format("{}: container {}: unknown lifecycle.stopSignal '{}'", path, c.name,
                              c.stop_signal));
    }
    pod.stop_signal = *signal;
    spec.image_stop_signal = false;
  }
}

}  // namespace

void run_image(const std::string& path, const std::string& container, RuntimeKind runtime,
               Options& options) {
  kube::Workload w = workload_of(path);
  const kube::Container& c = kube::serving_container(w, container);
  ContainerSpec spec;
  spec.runtime_kind = runtime;
  set_image(spec, options.pod, c, path);
  options.pod.container = spec;
  options.pod.env = c.env;
}

PodSpec new_version_of(const std::string& path, const std::string& container, PodSpec base) {
  kube::Workload w = workload_of(path);
  const kube::Container& c = kube::serving_container(w, container);
  if (base.container) {
    set_image(*base.container, base, c, path);
  } else if (c.command.empty() && c.args.empty()) {
    throw Error(
        fmt::format("{}: container {} has no command or args (pods of a command run "
                    "commands): give the new version with --to, or run images (-f, no command)",
                    path, c.name));
  }
  if (!base.container) {
    base.command = c.command;
    base.command.insert(base.command.end(), c.args.begin(), c.args.end());
  }
  base.env = c.env;
  if (c.pre_stop) {
    base.prestop = hook_of(*c.pre_stop, path);
  }
  if (c.readiness_probe) {
    base.readiness = probe_of(*c.readiness_probe, c, path);
  }
  if (c.liveness_probe) {
    base.liveness = probe_of(*c.liveness_probe, c, path);
  }
  return base;
}

void apply_manifest(const std::string& path, const std::string& container, Options& options) {
  kube::Workload w = workload_of(path);
  kube::require_rolling_update(w);
  const kube::Container& c = kube::serving_container(w, container);
  options.replicas = static_cast<int>(w.replicas.value_or(options.replicas));
  if (w.strategy.max_surge) {
    options.max_surge = *w.strategy.max_surge;
  }
  if (w.strategy.max_unavailable) {
    options.max_unavailable = *w.strategy.max_unavailable;
  }
  options.min_ready = std::chrono::seconds(w.min_ready_seconds);
  options.pod.grace = std::chrono::seconds(w.grace_seconds());
  if (c.pre_stop) {
    options.pod.prestop = hook_of(*c.pre_stop, path);
  }
  if (c.readiness_probe) {
    options.pod.readiness = probe_of(*c.readiness_probe, c, path);
  }
  if (c.liveness_probe) {
    options.pod.liveness = probe_of(*c.liveness_probe, c, path);
  }
  if (!c.ports.empty() && c.ports.front().container_port > 0) {
    options.pod.port = static_cast<uint16_t>(c.ports.front().container_port);
  }
  options.scenario.extra["manifest"] =
      fmt::format("{} {}/{} (container {})", path, kube::to_string(w.kind), w.meta.name, c.name);
  options.scenario.container = c.name;
}

}  // namespace zerodrop::lab
