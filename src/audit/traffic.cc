#include "audit/traffic.h"

#include <algorithm>
#include <array>
#include <optional>

#include <fmt/format.h>

namespace zerodrop::audit {
namespace {

using kube::Container;
using kube::Workload;

bool contains(std::string_view text, std::string_view part) {
  return text.find(part) != std::string_view::npos;
}

// "metrics", "http-metrics", "https-metrics", "cmetrics", "prometheus": what exporters and
// controller-runtime name the port Prometheus scrapes.
bool metrics_name(std::string_view name) {
  return contains(name, "metrics") || name == "prometheus" || name == "prom";
}

// kube-state-metrics, *-metrics-service (kubebuilder), *-metrics-svc; not metrics-server,
// which serves the Metrics API to the API server.
bool metrics_service_name(std::string_view name) {
  return name.ends_with("-metrics") || name.ends_with("-metrics-service")
         || name.ends_with("-metrics-svc");
}

// The port number an address flag's value names: ":8443", "0.0.0.0:8080", "127.0.0.1:9090",
// "8080"; nullopt for "0" (disabled) or anything else.
std::optional<int> address_port(std::string_view value) {
  std::string_view digits = value.substr(value.rfind(':') + 1);
  if (digits.empty() || digits.size() > 5
      || digits.find_first_not_of("0123456789") != std::string_view::npos) {
    return std::nullopt;
  }
  int port = std::stoi(std::string(digits));
  return port > 0 && port <= 65535 ? std::optional(port) : std::nullopt;
}

bool metrics_flag(std::string_view flag) {
  constexpr std::array kFlags = {
      "metrics-bind-address", "metrics-bind-addr",      "metrics-addr",      "metrics-address",
      "metrics-port",         "metrics-listen-address", "web.listen-address"};
  return std::find(kFlags.begin(), kFlags.end(), flag) != kFlags.end();
}

// The ports a container's flags put a metrics listener on (--metrics-bind-address=:8443 or
// --metrics-bind-address :8443).
std::vector<int> metrics_flag_ports(const Container& c) {
  std::vector<std::string> argv = c.command;
  argv.insert(argv.end(), c.args.begin(), c.args.end());
  std::vector<int> out;
  for (size_t i = 0; i < argv.size(); ++i) {
    std::string_view arg = argv[i];
    size_t name_at = arg.find_first_not_of('-');
    if (!arg.starts_with("-") || name_at == std::string_view::npos) {
      continue;  // an operand, or "-" / "--"
    }
    arg.remove_prefix(name_at);
    size_t eq = arg.find('=');
    std::string_view flag = arg.substr(0, eq);
    if (!metrics_flag(flag)) {
      continue;
    }
    std::string_view value = eq != std::string_view::npos ? arg.substr(eq + 1)
                             : i + 1 < argv.size()        ? std::string_view(argv[i + 1])
                                                          : std::string_view();
    if (auto port = address_port(value)) {
      out.push_back(*port);
    }
  }
  return out;
}

bool annotated(const kube::Service& s, std::string_view key, std::string_view value) {
  auto it = s.meta.annotations.find(std::string(key));
  return it != s.meta.annotations.end() && (value.empty() || it->second == value);
}

// Whether the Service port is the one `ref` names: a Service port name, or its target.
bool names_port(const kube::PortRef& ref, const kube::ServicePort& port) {
  if (ref.named()) {
    return ref.name == port.name || (port.target_port.named() && ref.name == port.target_port.name);
  }
  return !port.target_port.named() && ref.number == port.target_port.number;
}

// The evidence that is on the Service itself (names, annotations) or a ServiceMonitor.
std::string scrape_evidence(const kube::Service& s, const kube::ServicePort& port,
                            std::span<const kube::ServiceMonitor* const> scrapers) {
  if (metrics_name(port.name)) {
    return fmt::format("its port is named '{}'", port.name);
  }
  if (port.target_port.named() && metrics_name(port.target_port.name)) {
    return fmt::format("it targets the port named '{}'", port.target_port.name);
  }
  if (metrics_service_name(s.meta.name)) {
    return "it is named as a metrics Service";
  }
  if (annotated(s, "prometheus.io/scrape", "true")) {
    auto it = s.meta.annotations.find("prometheus.io/port");
    if (it == s.meta.annotations.end() || it->second == std::to_string(port.port)
        || (!port.target_port.named() && it->second == std::to_string(port.target_port.number))) {
      return "it is annotated prometheus.io/scrape";
    }
  }
  for (const kube::ServiceMonitor* m : scrapers) {
    for (const kube::PortRef& ref : m->ports) {
      if (names_port(ref, port)) {
        return fmt::format("ServiceMonitor '{}' scrapes the port", m->meta.name);
      }
    }
  }
  return "";
}

// The value a flag is set to: "--leader-elect" is "true", "--leader-elect=false" is "false".
std::string_view flag_value(std::string_view arg) {
  size_t eq = arg.find('=');
  return eq == std::string_view::npos ? std::string_view("true") : arg.substr(eq + 1);
}

bool false_value(std::string_view value) {
  return value == "false" || value == "False" || value == "0" || value == "no";
}

// The leader-election flag or variable a container turns on (--leader-elect,
// --enable-leader-election, --leader-election, LEADER_ELECTION_IDENTITY=…), or "".
std::string leader_election(const Container& c) {
  std::vector<std::string> argv = c.command;
  argv.insert(argv.end(), c.args.begin(), c.args.end());
  for (std::string_view arg : argv) {
    size_t name_at = arg.find_first_not_of('-');
    if (!arg.starts_with("-") || name_at == std::string_view::npos) {
      continue;  // an operand, or "-" / "--"
    }
    std::string_view flag = arg.substr(name_at);
    std::string_view name = flag.substr(0, flag.find('='));
    if ((name == "leader-elect" || name == "enable-leader-election" || name == "leader-election"
         || name == "leader-elect-enabled")
        && !false_value(flag_value(flag))) {
      return std::string(arg);
    }
  }
  for (const auto& [name, value] : c.env) {
    if (contains(name, "LEADER_ELECT") && !false_value(value)) {
      return name;
    }
  }
  return "";
}

// The image's name without registry, path, tag or digest: "docker.io/bitnami/redis:7" -> "redis".
std::string_view image_name(std::string_view image) {
  image = image.substr(0, image.find('@'));
  image = image.substr(image.rfind('/') + 1);
  return image.substr(0, image.find(':'));
}

// Servers that keep their data in the pod and replicate only when configured to (a second
// replica of a single-instance one is a second, diverging store): "postgres", "rs-mongodb",
// "mysql-server"; not their routers, proxies, exporters, operators, UIs or config reloaders.
bool datastore_image(std::string_view image) {
  constexpr std::array kStores = {
      "postgres", "postgresql", "mysql",         "mariadb",    "mongo",     "mongodb",
      "redis",    "valkey",     "keydb",         "rabbitmq",   "kafka",     "zookeeper",
      "etcd",     "cassandra",  "minio",         "nats",       "influxdb",  "couchdb",
      "neo4j",    "memgraph",   "elasticsearch", "opensearch", "clickhouse"};
  constexpr std::array kClients = {
      "router",    "proxy",   "exporter", "operator",  "backup",     "client",    "ui",  "admin",
      "sentinel",  "connect", "bouncer",  "pgbouncer", "controller", "dashboard", "web", "express",
      "commander", "insight", "reloader", "config",    "boot",       "init",      "cli"};
  bool store = false;
  std::string_view name = image_name(image);
  while (!name.empty()) {
    size_t end = name.find_first_of("-_.");
    std::string_view token = name.substr(0, end);
    if (std::find(kClients.begin(), kClients.end(), token) != kClients.end()) {
      return false;
    }
    store = store || std::find(kStores.begin(), kStores.end(), token) != kStores.end();
    name = end == std::string_view::npos ? std::string_view() : name.substr(end + 1);
  }
  return store;
}

}  // namespace

std::string runs_alone(const Workload& w, int64_t replica_floor) {
  for (const Container& c : w.containers) {
    if (std::string flag = leader_election(c); !flag.empty()) {
      return fmt::format("container '{}' is leader-elected ({}): one instance works at a time",
                         c.name, flag);
    }
  }
  if (replica_floor > 1) {
    return "";  // a datastore of several replicas is configured as a cluster
  }
  for (const Container& c : w.containers) {
    if (!c.sidecar && datastore_image(c.image)) {
      return fmt::format(
          "image {} is a single-instance datastore: a second replica would be a "
          "second, diverging store, not a standby",
          c.image);
    }
    if (!c.sidecar && image_name(c.image).ends_with("-operator")) {
      return fmt::format(
          "image {} is an operator: two instances would reconcile against each "
          "other",
          c.image);
    }
  }
  return "";
}

bool monitors(const kube::ServiceMonitor& monitor, const kube::Service& s) {
  const std::string& ns = s.meta.namespace_name;
  bool in_namespace =
      monitor.any_namespace
      || (monitor.namespaces.empty()
              ? ns.empty() || monitor.meta.namespace_name.empty()
                    || ns == monitor.meta.namespace_name
              : ns.empty()
                    || std::find(monitor.namespaces.begin(), monitor.namespaces.end(), ns)
                           != monitor.namespaces.end());
  return in_namespace && monitor.selector.present && monitor.selector.matches(s.meta.labels);
}

std::string scrape_port(const kube::Service& s, const kube::ServicePort& port, const Workload& w,
                        std::span<const kube::ServiceMonitor* const> scrapers) {
  std::string evidence = scrape_evidence(s, port, scrapers);
  if (!evidence.empty()) {
    return fmt::format("Service '{}' port {}: {}", s.meta.name, port.port, evidence);
  }
  for (const Container& c : w.containers) {
    auto target = c.resolve(port.target_port);
    std::vector<int> listening = metrics_flag_ports(c);
    if (target && std::find(listening.begin(), listening.end(), *target) != listening.end()) {
      return fmt::format("Service '{}' port {}: container '{}' serves its metrics on {}",
                         s.meta.name, port.port, c.name, *target);
    }
  }
  return "";
}

std::string scrape_only(const kube::Service& s, const Workload& w,
                        std::span<const kube::ServiceMonitor* const> scrapers) {
  std::string first;
  for (const kube::ServicePort& port : s.ports) {
    std::string why = scrape_port(s, port, w, scrapers);
    if (why.empty()) {
      return "";
    }
    if (first.empty()) {
      first = std::move(why);
    }
  }
  return first;
}

}  // namespace zerodrop::audit
