#include "kube/workload_reader.h"

#include <fmt/format.h>

namespace zerodrop::kube::detail {
namespace {

PortRef read_port(Reader& r, const Entry& e) {
  std::string text = r.scalar(e.value, e.path);
  bool digits = !text.empty() && text.find_first_not_of("0123456789") == std::string::npos;
  if (digits) {
    return PortRef{static_cast<int>(r.integer(e.value, e.path, 1, 65535)), ""};
  }
  return PortRef{0, text};
}

PortRef required_port(Reader& r, Node map, const Path& path, Marks& marks) {
  auto port = r.child(map, path, "port");
  if (!port) {
    r.fail(map, path, "'port' is required");
  }
  marks.set("port", r.mark(port->key));
  return read_port(r, *port);
}

void read_handler_body(Reader& r, const Entry& e, Handler& h) {
  if (h.kind == HandlerKind::http_get || h.kind == HandlerKind::tcp_socket
      || h.kind == HandlerKind::grpc) {
    h.port = required_port(r, e.value, e.path, h.marks);
  }
  if (h.kind == HandlerKind::http_get) {
    if (auto path = r.child(e.value, e.path, "path")) {
      h.marks.set("path", r.mark(path->key));
      h.path = r.scalar(path->value, path->path);
    }
    h.scheme = r.opt_scalar(e.value, e.path, "scheme");
    if (h.scheme.empty()) {
      h.scheme = "HTTP";
    }
  } else if (h.kind == HandlerKind::exec) {
    if (auto command = r.child(e.value, e.path, "command")) {
      h.marks.set("command", r.mark(command->key));
      h.command = r.strings(command->value, command->path);
    }
  } else if (h.kind == HandlerKind::grpc) {
    h.path = r.opt_scalar(e.value, e.path, "service");
  } else if (h.kind == HandlerKind::sleep) {
    auto seconds = r.opt_integer(e.value, e.path, "seconds", h.marks, 0, INT32_MAX);
    if (!seconds) {
      r.fail(e.value, e.path, "'seconds' is required");
    }
    h.sleep_seconds = *seconds;
  }
}

// A probe's or a lifecycle hook's handler: exactly one of the handler keys.
Handler read_handler(Reader& r, Node map, const Path& path, bool allow_sleep) {
  static constexpr std::pair<std::string_view, HandlerKind> kKinds[] = {
      {"httpGet", HandlerKind::http_get}, {"tcpSocket", HandlerKind::tcp_socket},
      {"exec", HandlerKind::exec},        {"grpc", HandlerKind::grpc},
      {"sleep", HandlerKind::sleep},
  };
  for (const auto& [key, kind] : kKinds) {
    if (kind == HandlerKind::sleep && !allow_sleep) {
      continue;
    }
    if (auto e = r.child(map, path, key)) {
      Handler h;
      h.kind = kind;
      h.marks.self = r.mark(e->key);
      r.expect_map(e->value, e->path);
      read_handler_body(r, *e, h);
      return h;
    }
  }
  r.fail(map, path,
         allow_sleep ? "expected one of httpGet, tcpSocket, exec or sleep"
                     : "expected one of httpGet, tcpSocket, exec or grpc");
}

Probe read_probe(Reader& r, const Entry& e) {
  Probe p;
  p.marks.self = r.mark(e.key);
  p.handler = read_handler(r, e.value, e.path, false);
  // 0 (or absent) is what the API server's SetDefaults_Probe replaces with the default.
  auto num = [&](MarkKey key, int64_t fallback) {
    int64_t value = r.opt_integer(e.value, e.path, key, p.marks, 0).value_or(0);
    return value == 0 ? fallback : value;
  };
  p.initial_delay_seconds = num("initialDelaySeconds", 0);
  p.period_seconds = num("periodSeconds", 10);
  p.timeout_seconds = num("timeoutSeconds", 1);
  p.success_threshold = num("successThreshold", 1);
  p.failure_threshold = num("failureThreshold", 3);
  return p;
}

std::vector<ContainerPort> read_ports(Reader& r, const Entry& ports) {
  std::vector<ContainerPort> out;
  for (const Entry& e : r.items(ports.value, ports.path)) {
    ContainerPort p;
    p.mark = r.mark(e.value);
    auto number = r.child(e.value, e.path, "containerPort");
    if (!number) {
      r.fail(e.value, e.path, "'containerPort' is required");
    }
    p.container_port = static_cast<int>(r.integer(number->value, number->path, 1, 65535));
    p.name = r.opt_scalar(e.value, e.path, "name");
    std::string protocol = r.opt_scalar(e.value, e.path, "protocol");
    if (!protocol.empty()) {
      p.protocol = protocol;
    }
    out.push_back(std::move(p));
  }
  return out;
}

void read_lifecycle(Reader& r, const Entry& container, Container& c) {
  auto lifecycle = r.child(container.value, container.path, "lifecycle");
  if (!lifecycle) {
    return;
  }
  c.marks.set("lifecycle", r.mark(lifecycle->key));
  if (auto pre_stop = r.child(lifecycle->value, lifecycle->path, "preStop")) {
    c.marks.set("lifecycle.preStop", r.mark(pre_stop->key));
    c.pre_stop = read_handler(r, pre_stop->value, pre_stop->path, true);
  }
  c.stop_signal = r.opt_scalar(lifecycle->value, lifecycle->path, "stopSignal");
}

// securityContext.runAsUser of a container or a pod spec.
std::optional<int64_t> run_as_user(Reader& r, Node map, const Path& path) {
  auto context = r.child(map, path, "securityContext");
  if (!context) {
    return std::nullopt;
  }
  auto user = r.child(context->value, context->path, "runAsUser");
  if (!user) {
    return std::nullopt;
  }
  return r.integer(user->value, user->path, 0, INT32_MAX);
}

Container read_container(Reader& r, const Entry& e) {
  Container c;
  c.marks.self = r.mark(e.value);
  r.expect_map(e.value, e.path);
  c.name = r.opt_scalar(e.value, e.path, "name");
  if (auto image = r.child(e.value, e.path, "image")) {
    c.marks.set("image", r.mark(image->key));
    c.image = r.scalar(image->value, image->path);
  }
  if (auto command = r.child(e.value, e.path, "command")) {
    c.command = r.strings(command->value, command->path);
  }
  if (auto args = r.child(e.value, e.path, "args")) {
    c.args = r.strings(args->value, args->path);
  }
  if (auto env = r.child(e.value, e.path, "env")) {
    for (const Entry& var : r.items(env->value, env->path)) {
      c.env.emplace_back(r.opt_scalar(var.value, var.path, "name"),
                         r.opt_scalar(var.value, var.path, "value"));
    }
  }
  if (auto ports = r.child(e.value, e.path, "ports")) {
    c.marks.set("ports", r.mark(ports->key));
    c.ports = read_ports(r, *ports);
  }
  if (auto mounts = r.child(e.value, e.path, "volumeMounts")) {
    c.marks.set("volumeMounts", r.mark(mounts->key));  // --fix appends to the list
  }
  read_lifecycle(r, e, c);
  c.run_as_user = run_as_user(r, e.value, e.path);
  static constexpr std::pair<MarkKey, std::optional<Probe> Container::*> kProbes[] = {
      {MarkKey("readinessProbe"), &Container::readiness_probe},
      {MarkKey("livenessProbe"), &Container::liveness_probe},
      {MarkKey("startupProbe"), &Container::startup_probe},
  };
  for (const auto& [key, member] : kProbes) {
    if (auto probe = r.child(e.value, e.path, key.name())) {
      c.marks.set(key, r.mark(probe->key));
      c.*member = read_probe(r, *probe);
    }
  }
  return c;
}

void read_pod_spec(Reader& r, const Entry& spec, Workload& w) {
  w.marks.set("pod.spec", r.mark(spec.key));
  r.expect_map(spec.value, spec.path);
  if (auto grace = r.child(spec.value, spec.path, "terminationGracePeriodSeconds")) {
    w.marks.set("pod.terminationGracePeriodSeconds", r.mark(grace->key));
    w.termination_grace_period_seconds = r.integer(grace->value, grace->path, 0, INT32_MAX);
  }
  if (auto containers = r.child(spec.value, spec.path, "containers")) {
    int index = 0;
    for (const Entry& e : r.items(containers->value, containers->path)) {
      w.containers.push_back(read_container(r, e));
      w.containers.back().list_index = index++;
    }
  }
  if (auto volumes = r.child(spec.value, spec.path, "volumes")) {
    w.marks.set("pod.volumes", r.mark(volumes->key));  // --fix appends to the list
  }
  // Native sidecars (restartable init containers) serve traffic like main containers.
  if (auto inits = r.child(spec.value, spec.path, "initContainers")) {
    w.marks.set("pod.initContainers", r.mark(inits->key));
    int index = 0;
    for (const Entry& e : r.items(inits->value, inits->path)) {
      if (r.opt_scalar(e.value, e.path, "restartPolicy") == "Always") {
        w.containers.push_back(read_container(r, e));
        w.containers.back().sidecar = true;
        w.containers.back().list_index = index;
      }
      ++index;
    }
  }
  if (std::optional<int64_t> user = run_as_user(r, spec.value, spec.path)) {
    for (Container& c : w.containers) {
      c.run_as_user = c.run_as_user ? c.run_as_user : user;  // the container's own wins
    }
  }
}

// Reads a pod template ({metadata, spec}) into the workload.
void read_template(Reader& r, const Entry& tmpl, Workload& w) {
  w.marks.set("pod", r.mark(tmpl.key));
  r.expect_map(tmpl.value, tmpl.path);
  if (auto meta = r.child(tmpl.value, tmpl.path, "metadata")) {
    if (auto labels = r.child(meta->value, meta->path, "labels")) {
      w.pod_labels = r.string_map(labels->value, labels->path);
    }
    if (auto notes = r.child(meta->value, meta->path, "annotations")) {
      w.marks.set("pod.metadata.annotations", r.mark(notes->key));
      w.pod_annotations = r.string_map(notes->value, notes->path);
    }
  }
  if (auto spec = r.child(tmpl.value, tmpl.path, "spec")) {
    read_pod_spec(r, *spec, w);
  }
}

// The Deployment and Argo Rollout canary default for maxSurge and maxUnavailable.
constexpr IntOrPercent kQuarter = IntOrPercent::percent(25);

void read_rolling(Reader& r, const Entry& rolling, Strategy& s) {
  if (auto surge = r.child(rolling.value, rolling.path, "maxSurge")) {
    s.marks.set("maxSurge", r.mark(surge->key));
    s.max_surge = r.int_or_percent(surge->value, surge->path);
  }
  if (auto unavailable = r.child(rolling.value, rolling.path, "maxUnavailable")) {
    s.marks.set("maxUnavailable", r.mark(unavailable->key));
    s.max_unavailable = r.int_or_percent(unavailable->value, unavailable->path);
    if (s.max_unavailable->unit() == IntOrPercent::Unit::percent
        && s.max_unavailable->value() > 100) {
      r.fail(unavailable->value, unavailable->path,
             fmt::format("must not be more than 100%, got '{}'", s.max_unavailable->to_string()));
    }
  }
}

// Deployment strategy / StatefulSet and DaemonSet updateStrategy, with their defaults.
Strategy read_update_strategy(Reader& r, const Entry& spec, WorkloadKind kind) {
  bool deployment = kind == WorkloadKind::deployment;
  Strategy s{"RollingUpdate",
             deployment ? kQuarter : IntOrPercent::count(0),
             deployment ? kQuarter : IntOrPercent::count(1),
             {}};
  auto e = r.child(spec.value, spec.path, deployment ? "strategy" : "updateStrategy");
  if (!e) {
    return s;
  }
  s.marks.self = r.mark(e->key);
  if (auto type = r.child(e->value, e->path, "type")) {
    s.marks.set("type", r.mark(type->key));
    s.type = r.scalar(type->value, type->path);
  }
  if (s.type != "RollingUpdate") {
    s.max_surge.reset();
    s.max_unavailable.reset();
    return s;
  }
  if (auto rolling = r.child(e->value, e->path, "rollingUpdate")) {
    s.marks.set("rollingUpdate", r.mark(rolling->key));
    read_rolling(r, *rolling, s);
  }
  return s;
}

// An Argo Rollout's strategy: canary (25%/25% defaults) or blueGreen.
Strategy read_rollout_strategy(Reader& r, const Entry& spec) {
  Strategy s{"Canary", kQuarter, kQuarter, {}};
  auto e = r.child(spec.value, spec.path, "strategy");
  if (!e) {
    return s;
  }
  s.marks.self = r.mark(e->key);
  if (auto canary = r.child(e->value, e->path, "canary")) {
    s.marks.set("canary", r.mark(canary->key));
    read_rolling(r, *canary, s);
  } else if (r.child(e->value, e->path, "blueGreen")) {
    s = Strategy{"BlueGreen", std::nullopt, std::nullopt, s.marks};
  }
  return s;
}

Strategy read_strategy(Reader& r, const Entry& spec, WorkloadKind kind) {
  switch (kind) {
    case WorkloadKind::deployment:
    case WorkloadKind::stateful_set:
    case WorkloadKind::daemon_set:
      return read_update_strategy(r, spec, kind);
    case WorkloadKind::rollout:
      return read_rollout_strategy(r, spec);
    default:
      return Strategy{};
  }
}

// The object spec that holds `template`: spec, or spec.jobTemplate.spec for a CronJob.
std::optional<Entry> template_owner(Reader& r, const Entry& spec, WorkloadKind kind) {
  if (kind != WorkloadKind::cron_job) {
    return spec;
  }
  auto job = r.child(spec.value, spec.path, "jobTemplate");
  if (!job) {
    return std::nullopt;
  }
  auto job_spec = r.child(job->value, job->path, "spec");
  if (!job_spec) {
    return std::nullopt;
  }
  // Re-anchor the path: the Entry's parent lives in this frame only.
  return Entry{job_spec->key, job_spec->value, Path{&spec.path, "jobTemplate.spec"}};
}

void read_controller_spec(Reader& r, const Entry& spec, Workload& w) {
  w.marks.set("spec", r.mark(spec.key));
  r.expect_map(spec.value, spec.path);
  if (auto replicas = r.child(spec.value, spec.path, "replicas")) {
    w.marks.set("spec.replicas", r.mark(replicas->key));
    w.replicas = r.integer(replicas->value, replicas->path, 0, INT32_MAX);
  }
  if (auto ready = r.child(spec.value, spec.path, "minReadySeconds")) {
    w.marks.set("spec.minReadySeconds", r.mark(ready->key));
    w.min_ready_seconds = r.integer(ready->value, ready->path, 0, INT32_MAX);
  }
  if (auto selector = r.child(spec.value, spec.path, "selector")) {
    w.selector = r.selector(selector->value, selector->path);
  }
  w.strategy = read_strategy(r, spec, w.kind);
  if (w.strategy.marks.self.line != 0) {
    w.marks.set("spec.strategy", w.strategy.marks.self);
  }
  auto owner = template_owner(r, spec, w.kind);
  if (!owner) {
    return;
  }
  if (auto tmpl = r.child(owner->value, owner->path, "template")) {
    read_template(r, *tmpl, w);
  }
}

}  // namespace

Meta read_meta(Reader& r, Node root, const Path& path) {
  Meta m;
  m.file = r.file();
  m.marks.self = r.mark(root);
  auto api = r.child(root, path, "apiVersion");
  auto kind = r.child(root, path, "kind");
  if (!api || !kind) {
    r.fail(root, path, "not a Kubernetes object: 'apiVersion' and 'kind' are required");
  }
  m.api_version = r.scalar(api->value, api->path);
  m.kind = r.scalar(kind->value, kind->path);
  auto meta = r.child(root, path, "metadata");
  if (!meta) {
    return m;
  }
  if (auto name = r.child(meta->value, meta->path, "name")) {
    m.marks.set("metadata.name", r.mark(name->key));
    m.name = r.scalar(name->value, name->path);
  }
  m.namespace_name = r.opt_scalar(meta->value, meta->path, "namespace");
  if (auto labels = r.child(meta->value, meta->path, "labels")) {
    m.labels = r.string_map(labels->value, labels->path);
  }
  if (auto notes = r.child(meta->value, meta->path, "annotations")) {
    m.marks.set("metadata.annotations", r.mark(notes->key));
    m.annotations = r.string_map(notes->value, notes->path);
  }
  return m;
}

std::optional<WorkloadKind> workload_kind(const Meta& meta) {
  static constexpr std::pair<std::string_view, WorkloadKind> kKinds[] = {
      {"Deployment", WorkloadKind::deployment},
      {"StatefulSet", WorkloadKind::stateful_set},
      {"DaemonSet", WorkloadKind::daemon_set},
      {"ReplicaSet", WorkloadKind::replica_set},
      {"Pod", WorkloadKind::pod},
      {"Job", WorkloadKind::job},
      {"CronJob", WorkloadKind::cron_job},
  };
  if (meta.kind == "Rollout") {
    return meta.api_version.starts_with("argoproj.io/") ? std::optional(WorkloadKind::rollout)
                                                        : std::nullopt;
  }
  for (const auto& [name, kind] : kKinds) {
    if (meta.kind == name) {
      return kind;
    }
  }
  return std::nullopt;
}

Workload read_workload(Reader& r, Node root, const Path& path, Meta meta, WorkloadKind kind) {
  Workload w;
  w.kind = kind;
  w.meta = std::move(meta);
  auto spec = r.child(root, path, "spec");
  if (!spec) {
    return w;
  }
  if (kind != WorkloadKind::pod) {
    read_controller_spec(r, *spec, w);
    return w;
  }
  // A bare Pod: its own metadata is the template's.
  w.pod_labels = w.meta.labels;
  w.pod_annotations = w.meta.annotations;
  w.marks.set("pod.metadata.annotations", w.meta.marks.at("metadata.annotations"));
  read_pod_spec(r, *spec, w);
  return w;
}

}  // namespace zerodrop::kube::detail
