#include "audit/readiness_fix.h"

#include <algorithm>
#include <array>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

namespace zerodrop::audit {
namespace {

using kube::Container;
using kube::Handler;
using kube::HandlerKind;

std::string port_flow(const kube::PortRef& port) {
  return port.named() ? port.name : std::to_string(port.number);
}

// Ports of servers that speak their own protocol, not HTTP: postgres, mysql, mongo, redis,
// kafka, rabbitmq (AMQP), memcached, cassandra, zookeeper, nats, sentinel.
bool datastore_port(int port) {
  constexpr std::array kPorts = {5432,  3306, 27017, 6379, 9092,  5672,
                                 11211, 9042, 2181,  4222, 26379, 33060};
  return std::find(kPorts.begin(), kPorts.end(), port) != kPorts.end();
}

bool grpc_name(std::string_view name) {
  return name == "grpc" || name.starts_with("grpc-") || name.ends_with("-grpc");
}

bool tls_name(std::string_view name) {
  return name == "https" || name.starts_with("https-") || name.ends_with("-https") || name == "tls";
}

// The scheme the container's other HTTP probes use on `port`, "" if none says.
std::string known_scheme(const Container& c, int port) {
  for (const auto* probe : {&c.liveness_probe, &c.startup_probe, &c.readiness_probe}) {
    if (*probe && (*probe)->handler.kind == HandlerKind::http_get
        && c.resolve((*probe)->handler.port) == port) {
      return (*probe)->handler.scheme;
    }
  }
  return "";
}

// A probe the container already passes: startup first (it proves the app came up), then
// liveness. With `only_port`, only an httpGet on that port.
std::optional<std::pair<Handler, std::string>> proven_handler(const Container& c,
                                                              std::optional<int> only_port) {
  for (const auto* probe : {&c.startup_probe, &c.liveness_probe}) {
    if (!*probe) {
      continue;
    }
    const Handler& h = (*probe)->handler;
    if (only_port && (h.kind != HandlerKind::http_get || c.resolve(h.port) != only_port)) {
      continue;
    }
    return std::make_pair(h, probe == &c.startup_probe ? "the startup probe's handler"
                                                       : "the liveness probe's handler");
  }
  return std::nullopt;
}

// The container port traffic most likely reaches: the first that speaks HTTP, else the first.
const kube::ContainerPort* main_port(const WorkloadView& view, size_t index) {
  const Container& c = view.workload->containers[index];
  for (const kube::ContainerPort& p : c.ports) {
    if (!view.http_evidence(index, p.container_port).empty()) {
      return &p;
    }
  }
  return c.ports.empty() ? nullptr : &c.ports.front();
}

ReadinessProposal advice(const Handler& h, std::string reason) {
  return {std::nullopt, handler_flow(h), std::move(reason)};
}

ReadinessProposal proven(const Handler& h, std::string reason) {
  return {h, handler_flow(h), std::move(reason)};
}

ReadinessProposal unproven_http(const Container& c, const kube::ContainerPort& p,
                                std::string evidence) {
  Handler h;
  h.kind = HandlerKind::http_get;
  h.path = "<the app's readiness path>";
  h.port = p.name.empty() ? kube::PortRef{p.container_port, ""} : kube::PortRef{0, p.name};
  std::string scheme = known_scheme(c, p.container_port);
  h.scheme = !scheme.empty() ? scheme : tls_name(p.name) ? "HTTPS" : "HTTP";
  return advice(h, fmt::format("port {} speaks HTTP ({}) but nothing in the manifest tells "
                               "which path answers when the app is ready",
                               port_flow(h.port), evidence));
}

}  // namespace

std::string handler_flow(const Handler& h) {
  switch (h.kind) {
    case HandlerKind::http_get: {
      std::string scheme = h.scheme == "HTTPS" ? ", scheme: HTTPS" : "";
      return fmt::format("{{httpGet: {{path: {}, port: {}{}}}}}", h.path.empty() ? "/" : h.path,
                         port_flow(h.port), scheme);
    }
    case HandlerKind::tcp_socket:
      return fmt::format("{{tcpSocket: {{port: {}}}}}", port_flow(h.port));
    case HandlerKind::grpc:
      return h.path.empty()
                 ? fmt::format("{{grpc: {{port: {}}}}}", port_flow(h.port))
                 : fmt::format("{{grpc: {{port: {}, service: {}}}}}", port_flow(h.port), h.path);
    case HandlerKind::exec:
      return fmt::format("{{exec: {{command: {}}}}}", nlohmann::json(h.command).dump());
    case HandlerKind::sleep:
      return fmt::format("{{sleep: {{seconds: {}}}}}", h.sleep_seconds);
  }
  return "";
}

ReadinessProposal propose_readiness(const WorkloadView& view, size_t index,
                                    const Handler* replacing) {
  const Container& c = view.workload->containers[index];
  if (replacing) {
    auto port = c.resolve(replacing->port);
    if (auto h = proven_handler(c, port)) {
      return proven(h->first, h->second + ", an HTTP GET on the same port");
    }
    kube::ContainerPort p{replacing->port.name, port.value_or(replacing->port.number), "TCP", {}};
    return unproven_http(c, p, view.http_evidence(index, p.container_port));
  }
  if (auto h = proven_handler(c, std::nullopt)) {
    return proven(h->first, h->second + ": the container already passes it");
  }
  const kube::ContainerPort* p = main_port(view, index);
  if (p == nullptr) {
    Handler h;
    h.kind = HandlerKind::http_get;
    h.path = "<path>";
    h.port = {0, "<port>"};
    return advice(h, "the container declares no port and no probe to take the handler from");
  }
  Handler h;
  h.port = p->name.empty() ? kube::PortRef{p->container_port, ""} : kube::PortRef{0, p->name};
  if (datastore_port(p->container_port)) {
    h.kind = HandlerKind::tcp_socket;
    return proven(h, fmt::format("port {} is a datastore's own protocol, not HTTP: a TCP connect "
                                 "proves it accepts (a client check via exec says more)",
                                 p->container_port));
  }
  std::string evidence = view.http_evidence(index, p->container_port);
  if (grpc_name(p->name) || evidence.find("grpc") != std::string::npos) {
    h.kind = HandlerKind::grpc;
    return advice(h, "a gRPC port: the grpc probe needs the app to serve grpc.health.v1");
  }
  if (!evidence.empty()) {
    return unproven_http(c, *p, evidence);
  }
  h.kind = HandlerKind::http_get;
  h.path = "<path>";
  return advice(
      h, fmt::format("nothing in the manifest tells what port {} speaks", port_flow(h.port)));
}

}  // namespace zerodrop::audit
