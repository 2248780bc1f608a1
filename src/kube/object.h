#pragma once

#include <optional>
#include <string>
#include <variant>
#include <vector>

#include "kube/workload.h"

namespace zerodrop::kube {

struct ServicePort {
  std::string name;
  int port = 0;
  PortRef target_port;  // defaults to `port`
  std::string app_protocol;
  Mark mark;
};

// A Service: which pods it selects, through which ports.
struct Service {
  Meta meta;
  Labels selector;  // empty: no selector, endpoints managed by hand
  std::string type;
  std::vector<ServicePort> ports;
};

// A PodDisruptionBudget; min_available and max_unavailable are int-or-percent as written.
struct PodDisruptionBudget {
  Meta meta;
  LabelSelector selector;
  std::optional<std::string> min_available;
  std::optional<std::string> max_unavailable;
};

// A HorizontalPodAutoscaler (autoscaling/v1 or v2).
struct HorizontalPodAutoscaler {
  Meta meta;
  std::string target_api_version;
  std::string target_kind;
  std::string target_name;
  std::optional<int64_t> min_replicas;  // nil means 1
  int64_t max_replicas = 0;
};

// A backend an Ingress routes HTTP to.
struct IngressBackend {
  std::string service;
  PortRef port;
  Mark mark;
};

struct Ingress {
  Meta meta;
  std::vector<IngressBackend> backends;
};

// A Prometheus Operator ServiceMonitor (monitoring.coreos.com): the Services it scrapes, by label.
struct ServiceMonitor {
  Meta meta;
  LabelSelector selector;               // of Services, not pods
  bool any_namespace = false;           // namespaceSelector.any
  std::vector<std::string> namespaces;  // namespaceSelector.matchNames; empty: its own
  std::vector<PortRef> ports;           // endpoints[].port (a Service port name) or targetPort
};

// Any other Kubernetes object (ConfigMap, Namespace, CRDs…): kept for its metadata.
struct OtherObject {
  Meta meta;
};

using Object = std::variant<Workload, Service, PodDisruptionBudget, HorizontalPodAutoscaler,
                            Ingress, ServiceMonitor, OtherObject>;

const Meta& meta_of(const Object& object);

}  // namespace zerodrop::kube
