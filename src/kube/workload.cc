#include "kube/workload.h"

#include "kube/object.h"

namespace zerodrop::kube {

std::string_view to_string(HandlerKind kind) {
  switch (kind) {
    case HandlerKind::http_get:
      return "httpGet";
    case HandlerKind::tcp_socket:
      return "tcpSocket";
    case HandlerKind::exec:
      return "exec";
    case HandlerKind::grpc:
      return "grpc";
    case HandlerKind::sleep:
      return "sleep";
  }
  return "unknown";
}

std::string_view to_string(WorkloadKind kind) {
  switch (kind) {
    case WorkloadKind::deployment:
      return "Deployment";
    case WorkloadKind::stateful_set:
      return "StatefulSet";
    case WorkloadKind::daemon_set:
      return "DaemonSet";
    case WorkloadKind::replica_set:
      return "ReplicaSet";
    case WorkloadKind::pod:
      return "Pod";
    case WorkloadKind::job:
      return "Job";
    case WorkloadKind::cron_job:
      return "CronJob";
    case WorkloadKind::rollout:
      return "Rollout";
  }
  return "unknown";
}

std::optional<int> Container::resolve(const PortRef& port) const {
  if (!port.named()) {
    return port.number;
  }
  for (const ContainerPort& p : ports) {
    if (p.name == port.name) {
      return p.container_port;
    }
  }
  return std::nullopt;
}

const Meta& meta_of(const Object& object) {
  return std::visit([](const auto& o) -> const Meta& { return o.meta; }, object);
}

}  // namespace zerodrop::kube
