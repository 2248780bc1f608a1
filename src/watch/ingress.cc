#include "watch/ingress.h"

#include <algorithm>

#include <fmt/format.h>

#include "base/error.h"

namespace zerodrop::watch {

using Json = nlohmann::json;

namespace {

const Json& at(const Json& j, const char* name) {
  static const Json null;
  return j.is_object() && j.contains(name) ? j[name] : null;
}

std::string str(const Json& j, const char* name) {
  const Json& v = at(j, name);
  return v.is_string() ? v.get<std::string>() : "";
}

// Whether a backend ({"service": {"name", "port": {"name"|"number"}}}) is the Service's port.
bool backs(const Json& backend, const std::string& service, const std::string& port_name,
           int port_number) {
  const Json& s = at(backend, "service");
  if (str(s, "name") != service) {
    return false;
  }
  const Json& port = at(s, "port");
  if (at(port, "number").is_number_integer()) {
    return at(port, "number").get<int>() == port_number;
  }
  return !port_name.empty() && str(port, "name") == port_name;
}

std::vector<std::string> segments(const std::string& path) {
  std::vector<std::string> out;
  size_t at = 0;
  while (at < path.size()) {
    size_t end = path.find('/', at);
    end = end == std::string::npos ? path.size() : end;
    if (end > at) {
      out.push_back(path.substr(at, end - at));
    }
    at = end + 1;
  }
  return out;
}

}  // namespace

std::vector<IngressRoute> routes_to(const Json& ingress, const std::string& namespace_name,
                                    const std::string& service, const std::string& port_name,
                                    int port_number) {
  std::vector<IngressRoute> out;
  const Json& meta = at(ingress, "metadata");
  if (str(meta, "namespace") != namespace_name) {
    return out;
  }
  std::string name = namespace_name + "/" + str(meta, "name");
  const Json& spec = at(ingress, "spec");
  const Json& rules = at(spec, "rules");
  if (rules.is_array()) {
    for (const Json& rule : rules) {
      const Json& paths = at(at(rule, "http"), "paths");
      if (!paths.is_array()) {
        continue;
      }
      for (const Json& p : paths) {
        if (backs(at(p, "backend"), service, port_name, port_number)) {
          std::string path = str(p, "path");
          out.push_back(
              {name, str(rule, "host"), path.empty() ? "/" : path,
               str(p, "pathType").empty() ? "ImplementationSpecific" : str(p, "pathType")});
        }
      }
    }
  }
  if (backs(at(spec, "defaultBackend"), service, port_name, port_number)) {
    out.push_back({name, "", "/", "Default"});
  }
  return out;
}

bool admits(const IngressRoute& route, const std::string& path) {
  if (route.path_type == "Exact") {
    return path == route.path;
  }
  std::vector<std::string> prefix = segments(route.path);
  std::vector<std::string> whole = segments(path.substr(0, path.find('?')));
  return prefix.size() <= whole.size() && std::equal(prefix.begin(), prefix.end(), whole.begin());
}

IngressProbe ingress_probe(const IngressRoute& route, const std::string& probe_path) {
  return {route.host, admits(route, probe_path) ? probe_path : route.path};
}

std::optional<IngressRoute> chosen_route(std::vector<IngressRoute> routes) {
  if (routes.empty()) {
    return std::nullopt;
  }
  std::stable_sort(routes.begin(), routes.end(), [](const IngressRoute& a, const IngressRoute& b) {
    return std::tie(a.ingress, a.host) < std::tie(b.ingress, b.host);
  });
  for (const IngressRoute& r : routes) {
    if (!r.host.empty()) {
      return r;
    }
  }
  return routes.front();
}

std::optional<verify::ProbeTarget> ingress_target(const ServiceInfo& service,
                                                  const std::map<std::string, Json>& ingresses,
                                                  const std::string& controller) {
  // HTTP/1.1 only: an h2c or gRPC Service behind an Ingress is reached over TLS or with the
  // controller's own gRPC configuration, neither of which a plain-port probe exercises.
  if (service.target.url.empty() || !service.problem.empty() || controller.empty()
      || service.target.protocol != load::Protocol::http1) {
    return std::nullopt;
  }
  std::vector<IngressRoute> routes;
  for (const auto& [key, ingress] : ingresses) {
    for (IngressRoute& r : routes_to(ingress, service.namespace_name, service.name,
                                     service.port_name, service.port_number)) {
      routes.push_back(std::move(r));
    }
  }
  std::optional<IngressRoute> route = chosen_route(std::move(routes));
  if (!route) {
    return std::nullopt;
  }
  IngressProbe probe = ingress_probe(*route, service.target.path);
  verify::ProbeTarget t = service.target;
  t.svc += kIngressSuffix;
  t.service.clear();  // no service-link variables: the request goes to the controller
  t.url = controller + probe.path;
  t.path = probe.path;
  t.host = probe.host;
  return t;
}

IngressController parse_ingress_service(const std::string& text) {
  IngressController c;
  size_t slash = text.find('/');
  std::string rest = slash == std::string::npos ? "" : text.substr(slash + 1);
  size_t colon = rest.find(':');
  c.namespace_name = slash == std::string::npos ? "" : text.substr(0, slash);
  c.name = rest.substr(0, colon);
  c.port = colon == std::string::npos ? "" : rest.substr(colon + 1);
  if (c.namespace_name.empty() || c.name.empty() || (colon != std::string::npos && c.port.empty())
      || c.name.find('/') != std::string::npos) {
    throw Error(fmt::format(
        "--ingress-service '{}': expected NAMESPACE/NAME[:PORT] (the ingress controller's Service)",
        text));
  }
  return c;
}

std::string controller_base(const IngressController& c, const Json& service) {
  const Json& spec = at(service, "spec");
  std::string ip = str(spec, "clusterIP");
  std::string what = fmt::format("--ingress-service {}/{}", c.namespace_name, c.name);
  if (ip.empty() || ip == "None") {
    throw Error(what + ": the Service has no ClusterIP to reach the controller through");
  }
  const Json& ports = at(spec, "ports");
  const Json* chosen = nullptr;
  if (ports.is_array()) {
    for (const Json& p : ports) {
      bool named =
          !c.port.empty()
          && (str(p, "name") == c.port
              || std::to_string(at(p, "port").is_number_integer() ? at(p, "port").get<int>() : 0)
                     == c.port);
      bool fallback = c.port.empty() && (str(p, "name") == "http" || at(p, "port") == 80);
      if (named || (fallback && chosen == nullptr)) {
        chosen = &p;
      }
    }
    if (chosen == nullptr && c.port.empty() && !ports.empty()) {
      chosen = &ports[0];
    }
  }
  if (chosen == nullptr || !at(*chosen, "port").is_number_integer()) {
    throw Error(fmt::format("{}: no port {} on the Service", what,
                            c.port.empty() ? "at all" : "'" + c.port + "'"));
  }
  bool v6 = ip.find(':') != std::string::npos;
  return fmt::format("http://{}{}{}:{}", v6 ? "[" : "", ip, v6 ? "]" : "",
                     at(*chosen, "port").get<int>());
}

}  // namespace zerodrop::watch
