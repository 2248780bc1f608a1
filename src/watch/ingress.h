#pragma once

#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include <nlohmann/json.hpp>

#include "watch/targets.h"

namespace zerodrop::watch {

// The svc key of a Service's Ingress target in the agents' reports: "NS/NAME#ingress".
inline constexpr std::string_view kIngressSuffix = "#ingress";

// A route an Ingress (networking.k8s.io/v1) gives to a Service's port: the rule's host ("" =
// any host) and path, or the Ingress's spec.defaultBackend (host "", path "/", type "Default").
struct IngressRoute {
  std::string ingress;    // "NS/NAME" of the Ingress
  std::string host;       // spec.rules[].host
  std::string path;       // spec.rules[].http.paths[].path ("/" when absent)
  std::string path_type;  // Exact, Prefix, ImplementationSpecific, Default

  bool operator==(const IngressRoute&) const = default;
};

// The routes of `ingress` whose backend is Service `service` (in the Ingress's namespace, which
// must be `namespace_name`) at the port named `port_name` or numbered `port_number` (a backend
// naming neither port of the Service does not route to it). A backend of a resource (not a
// Service) never matches. Pure; malformed parts are skipped.
std::vector<IngressRoute> routes_to(const nlohmann::json& ingress,
                                    const std::string& namespace_name, const std::string& service,
                                    const std::string& port_name, int port_number);

// Whether a route's path admits `path`, as the Ingress API defines matching: Exact is equal;
// Prefix matches element-wise on '/' ("/foo" admits "/foo", "/foo/" and "/foo/bar", not
// "/foobar"); ImplementationSpecific and the default backend are read as Prefix.
bool admits(const IngressRoute& route, const std::string& path);

// What an agent requests for a route: through the ingress controller, with the route's host as
// Host, the Service's own probe path when the route admits it, else the route's path.
struct IngressProbe {
  std::string host;
  std::string path;
};

IngressProbe ingress_probe(const IngressRoute& route, const std::string& probe_path);

// The one route probed for a Service among `routes` (of every Ingress): the first with a host,
// by Ingress and host order, else the first; nullopt when none. One per Service keeps the
// agents' work and the metrics' labels bounded.
std::optional<IngressRoute> chosen_route(std::vector<IngressRoute> routes);

// The Ingress target of a probed Service: the route chosen among `ingresses` (by "NS/NAME"),
// probed at `controller` (http://IP:PORT) with the route's host; nullopt when no Ingress routes
// to the Service's probed port, the Service has no target, or it is probed over HTTP/2 or gRPC.
std::optional<verify::ProbeTarget> ingress_target(
    const ServiceInfo& service, const std::map<std::string, nlohmann::json>& ingresses,
    const std::string& controller);

// --ingress-service NS/NAME[:PORT]: the ingress controller's Service; Error naming the flag
// when malformed.
struct IngressController {
  std::string namespace_name;
  std::string name;
  std::string port;  // a port's name or number; "" = the one named http, else 80, else the first
};

IngressController parse_ingress_service(const std::string& text);

// The controller's address for the agents, http://CLUSTER-IP:PORT, from its Service object;
// Error naming what is missing (no ClusterIP, no such port).
std::string controller_base(const IngressController& c, const nlohmann::json& service);

}  // namespace zerodrop::watch
