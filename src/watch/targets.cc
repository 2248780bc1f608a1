#include "watch/targets.h"

#include <algorithm>

#include <fmt/format.h>

namespace zerodrop::watch {

using Json = nlohmann::json;

namespace {

std::string annotation(const Json& service, const char* name) {
  const Json& meta = service.value("metadata", Json::object());
  const Json& annotations = meta.value("annotations", Json::object());
  return annotations.is_object() && annotations.contains(name) && annotations[name].is_string()
             ? annotations[name].get<std::string>()
             : "";
}

}  // namespace

ServiceInfo read_service(const Json& service) {
  ServiceInfo s;
  const Json meta = service.value("metadata", Json::object());
  const Json spec = service.value("spec", Json::object());
  s.namespace_name = meta.value("namespace", "");
  s.name = meta.value("name", "");
  s.selector = spec.value("selector", Json());
  s.target.svc = s.namespace_name + "/" + s.name;
  Json ports = spec.value("ports", Json::array());
  std::string cluster_ip = spec.value("clusterIP", "");
  if (!ports.is_array() || ports.empty()) {
    s.problem = fmt::format("Service {} has no port to probe", s.name);
    return s;
  }
  std::string wanted = annotation(service, "zerodrop.dev/probe-port");
  const Json* port = &ports[0];
  if (!wanted.empty()) {
    port = nullptr;
    for (const Json& p : ports) {
      if (p.value("name", "") == wanted || std::to_string(p.value("port", 0)) == wanted) {
        port = &p;
      }
    }
    if (port == nullptr) {
      s.problem = fmt::format("annotation zerodrop.dev/probe-port '{}' names no port of Service {}",
                              wanted, s.name);
      return s;
    }
  }
  std::string probe = annotation(service, "zerodrop.dev/probe");
  std::string path = "/";
  if (probe.starts_with("grpc:")) {
    s.problem = fmt::format(
        "annotation zerodrop.dev/probe '{}' on Service {}: the agents probe HTTP/1.1 only so "
        "far",
        probe, s.name);
    return s;
  }
  if (probe.starts_with("http:")) {
    path = probe.substr(5);
  } else if (probe.starts_with("/")) {
    path = probe;
  } else if (!probe.empty()) {
    s.problem = fmt::format(
        "annotation zerodrop.dev/probe '{}' on Service {}: expected http:/PATH or /PATH", probe,
        s.name);
    return s;
  }
  if (cluster_ip.empty() || cluster_ip == "None") {
    return s;  // headless: no routing to measure (pods are reached by name), not a mistake
  }
  std::string port_name = port->value("name", "");
  int number = port->value("port", 0);
  s.target.service = ports.size() > 1 && !port_name.empty() ? s.name + ":" + port_name : s.name;
  bool v6 = cluster_ip.find(':') != std::string::npos;
  s.target.url =
      fmt::format("http://{}{}{}:{}{}", v6 ? "[" : "", cluster_ip, v6 ? "]" : "", number, path);
  s.target.path = path;
  return s;
}

bool selects(const ServiceInfo& service, const Json& labels) {
  if (!service.selector.is_object() || service.selector.empty() || !labels.is_object()) {
    return false;
  }
  for (const auto& [key, value] : service.selector.items()) {
    if (!labels.contains(key) || labels[key] != value) {
      return false;
    }
  }
  return true;
}

std::vector<verify::ProbeTarget> agent_targets(const std::vector<ServiceInfo>& services,
                                               double rate, double budget, int agents) {
  std::vector<verify::ProbeTarget> out;
  for (const ServiceInfo& s : services) {
    if (s.problem.empty() && !s.target.url.empty()) {
      out.push_back(s.target);
    }
  }
  double each = rate;
  if (budget > 0 && !out.empty()) {
    each = std::min(rate, budget / (static_cast<double>(std::max(agents, 1)) * out.size()));
  }
  for (verify::ProbeTarget& t : out) {
    t.rate = each;
  }
  return out;
}

}  // namespace zerodrop::watch
