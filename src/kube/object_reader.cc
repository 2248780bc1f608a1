// Reads the objects audit reasons across: Service, PodDisruptionBudget, HPA, Ingress and
// ServiceMonitor.
#include <fmt/format.h>

#include "kube/workload_reader.h"

namespace zerodrop::kube::detail {
namespace {

PortRef read_port_ref(Reader& r, const Entry& e) {
  std::string text = r.scalar(e.value, e.path);
  if (!text.empty() && text.find_first_not_of("0123456789") == std::string::npos) {
    return PortRef{static_cast<int>(r.integer(e.value, e.path, 1, 65535)), ""};
  }
  return PortRef{0, text};
}

// A Service's targetPort; 0 is what the API server's SetDefaults_Service replaces with `port`.
PortRef read_target_port(Reader& r, const Entry& e, int port) {
  std::string text = r.scalar(e.value, e.path);
  if (!text.empty() && text.find_first_not_of("0123456789") == std::string::npos) {
    int number = static_cast<int>(r.integer(e.value, e.path, 0, 65535));
    return PortRef{number == 0 ? port : number, ""};
  }
  return PortRef{0, text};
}

Service read_service(Reader& r, const Entry& spec, Meta meta) {
  Service s{std::move(meta), {}, "", {}};
  if (auto selector = r.child(spec.value, spec.path, "selector")) {
    s.selector = r.string_map(selector->value, selector->path);
  }
  s.type = r.opt_scalar(spec.value, spec.path, "type");
  auto ports = r.child(spec.value, spec.path, "ports");
  if (!ports) {
    return s;
  }
  for (const Entry& e : r.items(ports->value, ports->path)) {
    ServicePort p;
    p.mark = r.mark(e.value);
    Marks unused;
    p.port = static_cast<int>(r.opt_integer(e.value, e.path, "port", unused, 1, 65535).value_or(0));
    p.name = r.opt_scalar(e.value, e.path, "name");
    p.app_protocol = r.opt_scalar(e.value, e.path, "appProtocol");
    auto target = r.child(e.value, e.path, "targetPort");
    p.target_port = target ? read_target_port(r, *target, p.port) : PortRef{p.port, ""};
    s.ports.push_back(std::move(p));
  }
  return s;
}

PodDisruptionBudget read_pdb(Reader& r, const Entry& spec, Meta meta) {
  PodDisruptionBudget p{std::move(meta), {}, std::nullopt, std::nullopt};
  if (auto selector = r.child(spec.value, spec.path, "selector")) {
    p.selector = r.selector(selector->value, selector->path);
  }
  if (auto min = r.child(spec.value, spec.path, "minAvailable")) {
    p.meta.marks.set("spec.minAvailable", r.mark(min->key));
    p.min_available = r.int_or_percent(min->value, min->path).to_string();
  }
  if (auto max = r.child(spec.value, spec.path, "maxUnavailable")) {
    p.meta.marks.set("spec.maxUnavailable", r.mark(max->key));
    p.max_unavailable = r.int_or_percent(max->value, max->path).to_string();
  }
  return p;
}

HorizontalPodAutoscaler read_hpa(Reader& r, const Entry& spec, Meta meta) {
  HorizontalPodAutoscaler h{std::move(meta), "", "", "", std::nullopt, 0};
  if (auto target = r.child(spec.value, spec.path, "scaleTargetRef")) {
    h.target_api_version = r.opt_scalar(target->value, target->path, "apiVersion");
    h.target_kind = r.opt_scalar(target->value, target->path, "kind");
    h.target_name = r.opt_scalar(target->value, target->path, "name");
  }
  h.min_replicas = r.opt_integer(spec.value, spec.path, "minReplicas", h.meta.marks, 0);
  h.max_replicas = r.opt_integer(spec.value, spec.path, "maxReplicas", h.meta.marks, 0).value_or(0);
  return h;
}

// networking.k8s.io/v1 ({service: {name, port: {number|name}}}) or v1beta1 (serviceName,
// servicePort).
std::optional<IngressBackend> read_backend(Reader& r, const Entry& e) {
  IngressBackend b;
  b.mark = r.mark(e.key);
  if (auto service = r.child(e.value, e.path, "service")) {
    b.service = r.opt_scalar(service->value, service->path, "name");
    if (auto port = r.child(service->value, service->path, "port")) {
      if (auto number = r.child(port->value, port->path, "number")) {
        b.port = read_port_ref(r, *number);
      } else {
        b.port.name = r.opt_scalar(port->value, port->path, "name");
      }
    }
  } else if (auto name = r.child(e.value, e.path, "serviceName")) {
    b.service = r.scalar(name->value, name->path);
    if (auto port = r.child(e.value, e.path, "servicePort")) {
      b.port = read_port_ref(r, *port);
    }
  }
  return b.service.empty() ? std::nullopt : std::optional(b);
}

Ingress read_ingress(Reader& r, const Entry& spec, Meta meta) {
  Ingress in{std::move(meta), {}};
  for (std::string_view key : {"defaultBackend", "backend"}) {
    if (auto e = r.child(spec.value, spec.path, key)) {
      if (auto b = read_backend(r, *e)) {
        in.backends.push_back(*b);
      }
    }
  }
  auto rules = r.child(spec.value, spec.path, "rules");
  if (!rules) {
    return in;
  }
  for (const Entry& rule : r.items(rules->value, rules->path)) {
    auto http = r.child(rule.value, rule.path, "http");
    auto paths = http ? r.child(http->value, http->path, "paths") : std::nullopt;
    if (!paths) {
      continue;
    }
    for (const Entry& p : r.items(paths->value, paths->path)) {
      if (auto backend = r.child(p.value, p.path, "backend")) {
        if (auto b = read_backend(r, *backend)) {
          in.backends.push_back(*b);
        }
      }
    }
  }
  return in;
}

// monitoring.coreos.com/v1: spec.selector of Services, namespaceSelector, endpoints[].port.
ServiceMonitor read_service_monitor(Reader& r, const Entry& spec, Meta meta) {
  ServiceMonitor m{std::move(meta), {}, false, {}, {}};
  if (auto selector = r.child(spec.value, spec.path, "selector")) {
    m.selector = r.selector(selector->value, selector->path);
  }
  if (auto ns = r.child(spec.value, spec.path, "namespaceSelector")) {
    m.any_namespace = r.opt_scalar(ns->value, ns->path, "any") == "true";
    if (auto names = r.child(ns->value, ns->path, "matchNames")) {
      m.namespaces = r.strings(names->value, names->path);
    }
  }
  if (auto endpoints = r.child(spec.value, spec.path, "endpoints")) {
    for (const Entry& e : r.items(endpoints->value, endpoints->path)) {
      if (auto port = r.child(e.value, e.path, "port")) {
        m.ports.push_back(PortRef{0, r.scalar(port->value, port->path)});
      } else if (auto target = r.child(e.value, e.path, "targetPort")) {
        m.ports.push_back(read_port_ref(r, *target));
      }
    }
  }
  return m;
}

}  // namespace

Object read_other(Reader& r, Node root, const Path& path, Meta meta) {
  const std::string& kind = meta.kind;
  bool known =
      kind == "Service" || kind == "PodDisruptionBudget" || kind == "HorizontalPodAutoscaler"
      || kind == "Ingress"
      || (kind == "ServiceMonitor" && meta.api_version.starts_with("monitoring.coreos.com/"));
  auto spec = known ? r.child(root, path, "spec") : std::nullopt;
  if (!spec) {
    return OtherObject{std::move(meta)};
  }
  r.expect_map(spec->value, spec->path);
  if (kind == "Service") {
    return read_service(r, *spec, std::move(meta));
  }
  if (kind == "PodDisruptionBudget") {
    return read_pdb(r, *spec, std::move(meta));
  }
  if (kind == "HorizontalPodAutoscaler") {
    return read_hpa(r, *spec, std::move(meta));
  }
  if (kind == "ServiceMonitor") {
    return read_service_monitor(r, *spec, std::move(meta));
  }
  return read_ingress(r, *spec, std::move(meta));
}

}  // namespace zerodrop::kube::detail
