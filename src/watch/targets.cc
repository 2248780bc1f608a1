#include "watch/targets.h"

#include <algorithm>
#include <cctype>
#include <string_view>

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

// What the annotation zerodrop.dev/probe and the port's appProtocol ask for.
struct Probe {
  load::Protocol protocol = load::Protocol::http1;
  std::string path = "/";
  std::string grpc_method;
  std::string problem;  // why the annotation cannot be probed ("" = fine)
};

// "/pkg.Service/Method" exactly (a leading slash, one more, names of letters, digits, '_' and
// the package's dots), as gRPC puts it in :path.
bool is_grpc_method(std::string_view m) {
  auto name_char = [](char c) {
    return std::isalnum(static_cast<unsigned char>(c)) || c == '_';
  };
  size_t slash = m.find('/', 1);
  if (!m.starts_with('/') || slash == std::string_view::npos || slash == 1
      || slash + 1 == m.size()) {
    return false;
  }
  std::string_view service = m.substr(1, slash - 1);
  std::string_view method = m.substr(slash + 1);
  return std::all_of(method.begin(), method.end(), name_char)
         && std::all_of(service.begin(), service.end(),
                        [&](char c) { return name_char(c) || c == '.'; })
         && !service.starts_with('.') && !service.ends_with('.')
         && service.find("..") == std::string_view::npos;
}

Probe read_probe(const std::string& annotation, const std::string& app_protocol) {
  Probe p;
  if (app_protocol == "grpc") {
    p.protocol = load::Protocol::grpc;
    p.grpc_method = kGrpcHealthCheck;
  } else if (app_protocol == "kubernetes.io/h2c" || app_protocol == "h2c") {
    p.protocol = load::Protocol::http2;
  }
  std::string_view a = annotation;
  if (a.starts_with("grpc:")) {
    p.protocol = load::Protocol::grpc;
    p.grpc_method = std::string(a.substr(5));
    if (!is_grpc_method(p.grpc_method)) {
      p.problem = "expected grpc:/pkg.Service/Method";
    }
    return p;
  }
  if (a.starts_with("h2c:")) {
    p.protocol = load::Protocol::http2;
    a.remove_prefix(4);
  } else if (a.starts_with("http:")) {
    a.remove_prefix(5);
  }
  if (p.protocol == load::Protocol::grpc && !a.empty()) {
    p.problem = "the port's appProtocol is grpc: expected grpc:/pkg.Service/Method";
  } else if (!a.empty() && !a.starts_with('/')) {
    p.problem = "expected http:/PATH, h2c:/PATH, /PATH or grpc:/pkg.Service/Method";
  } else if (!a.empty()) {
    p.path = std::string(a);
  }
  return p;
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
  Probe probe =
      read_probe(annotation(service, "zerodrop.dev/probe"), port->value("appProtocol", ""));
  if (!probe.problem.empty()) {
    s.problem = fmt::format("annotation zerodrop.dev/probe '{}' on Service {}: {}",
                            annotation(service, "zerodrop.dev/probe"), s.name, probe.problem);
    return s;
  }
  const std::string& path = probe.path;
  if (cluster_ip.empty() || cluster_ip == "None") {
    return s;  // headless: no routing to measure (pods are reached by name), not a mistake
  }
  std::string port_name = port->value("name", "");
  int number = port->value("port", 0);
  s.port_name = port_name;
  s.port_number = number;
  s.target.service = ports.size() > 1 && !port_name.empty() ? s.name + ":" + port_name : s.name;
  bool v6 = cluster_ip.find(':') != std::string::npos;
  s.target.url =
      fmt::format("http://{}{}{}:{}{}", v6 ? "[" : "", cluster_ip, v6 ? "]" : "", number, path);
  s.target.path = path;
  s.target.protocol = probe.protocol;
  s.target.grpc_method = probe.grpc_method;
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
