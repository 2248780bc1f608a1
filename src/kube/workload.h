#pragma once

#include <array>
#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "base/int_or_percent.h"
#include "kube/label_selector.h"
#include "kube/mark.h"

namespace zerodrop::kube {

// The metadata every object carries, plus where it was read from.
struct Meta {
  std::string api_version;
  std::string kind;
  std::string name;
  std::string namespace_name;  // "" when the manifest leaves it to `kubectl apply -n`
  Labels labels;
  Labels annotations;
  std::string file;  // as given on the command line; "-" is shown as "<stdin>"
  Marks marks;       // self = the document's first key; "metadata.name", "metadata.annotations"
};

// A port given as a number or as the name of a container port (probes, Service targetPort).
struct PortRef {
  int number = 0;    // 0 when `name` is used
  std::string name;  // "" when `number` is used

  bool named() const { return !name.empty(); }
};

// What a probe or a lifecycle hook does.
enum class HandlerKind { http_get, tcp_socket, exec, grpc, sleep };

// The handler's key in a manifest, indexed by HandlerKind.
inline constexpr auto kHandlerKindNames =
    std::to_array<std::string_view>({"httpGet", "tcpSocket", "exec", "grpc", "sleep"});
static_assert(kHandlerKindNames.size() == static_cast<size_t>(HandlerKind::sleep) + 1,
              "one name per HandlerKind");

constexpr std::string_view to_string(HandlerKind kind) {
  return kHandlerKindNames[static_cast<size_t>(kind)];
}

// A probe or lifecycle handler: only the fields of its kind are meaningful.
struct Handler {
  HandlerKind kind = HandlerKind::exec;
  std::string path;                  // httpGet, as written, query string included ("" means "/")
  std::string scheme;                // httpGet: "HTTP" (default) or "HTTPS"
  PortRef port;                      // httpGet, tcpSocket, grpc
  std::vector<std::string> command;  // exec
  int64_t sleep_seconds = 0;         // sleep (native, Kubernetes >= 1.29 alpha, 1.30 beta)
  Marks marks;                       // self = the handler key; "port", "path", "command", "seconds"
};

// A readiness, liveness or startup probe with Kubernetes' defaults filled in (seconds).
struct Probe {
  Handler handler;
  int64_t initial_delay_seconds = 0;
  int64_t period_seconds = 10;
  int64_t timeout_seconds = 1;
  int64_t success_threshold = 1;
  int64_t failure_threshold = 3;
  Marks marks;  // self = the probe key; "periodSeconds", "failureThreshold", "timeoutSeconds", …
};

struct ContainerPort {
  std::string name;
  int container_port = 0;
  std::string protocol = "TCP";
  Mark mark;
};

// One container of a pod template (init containers only when they are native sidecars).
struct Container {
  std::string name;
  std::string image;
  std::vector<std::string> command;
  std::vector<std::string> args;
  // Environment variables with a literal value (valueFrom ones with ""), in order.
  std::vector<std::pair<std::string, std::string>> env;
  std::vector<ContainerPort> ports;
  std::optional<Handler> pre_stop;
  std::optional<Probe> readiness_probe;
  std::optional<Probe> liveness_probe;
  std::optional<Probe> startup_probe;
  std::string stop_signal;             // lifecycle.stopSignal ("SIGUSR1"), "" when not set
  std::optional<int64_t> run_as_user;  // securityContext.runAsUser, else the pod's
  bool sidecar = false;                // an init container with restartPolicy: Always
  int list_index = 0;  // its position in containers (in initContainers for a sidecar)
  Marks marks;         // self = the "- name:" item; "image", "lifecycle.preStop", "ports", …

  // The number a PortRef stands for in this container, or nullopt for an unknown name.
  std::optional<int> resolve(const PortRef& port) const;
};

enum class WorkloadKind {
  deployment,
  stateful_set,
  daemon_set,
  replica_set,
  pod,
  job,
  cron_job,
  rollout,  // argoproj.io Rollout
};

// The kind as a manifest spells it, indexed by WorkloadKind.
inline constexpr auto kWorkloadKindNames = std::to_array<std::string_view>(
    {"Deployment", "StatefulSet", "DaemonSet", "ReplicaSet", "Pod", "Job", "CronJob", "Rollout"});
static_assert(kWorkloadKindNames.size() == static_cast<size_t>(WorkloadKind::rollout) + 1,
              "one name per WorkloadKind");

// The rollout strategy with the kind's defaults filled in.
struct Strategy {
  std::string type;  // RollingUpdate, Recreate, OnDelete, Canary, BlueGreen
  // As written ("1", "25%"), or the kind's default: Deployment and Rollout canary 25%/25%;
  // StatefulSet and DaemonSet maxUnavailable 1, maxSurge 0; nullopt where the strategy has no
  // such notion (Recreate, OnDelete, BlueGreen, Pod, Job).
  std::optional<IntOrPercent> max_surge;
  std::optional<IntOrPercent> max_unavailable;
  Marks marks;  // self = spec.strategy (or updateStrategy); "maxSurge", "maxUnavailable", "type",
                // "rollingUpdate", "canary"
};

// A pod-running object reduced to what rollout safety depends on.
struct Workload {
  WorkloadKind kind = WorkloadKind::deployment;
  Meta meta;
  std::optional<int64_t> replicas;  // nil is not 1: an HPA may own the count
  Strategy strategy;
  int64_t min_ready_seconds = 0;
  std::optional<int64_t> termination_grace_period_seconds;
  LabelSelector selector;  // spec.selector (Pods: none)
  Labels pod_labels;       // the pod template's labels (Pods: metadata.labels)
  Labels pod_annotations;
  std::vector<Container> containers;  // main containers, then native sidecars
  Marks marks;  // "spec", "spec.replicas", "spec.strategy", "spec.minReadySeconds",
                // "pod.terminationGracePeriodSeconds", "pod.metadata.annotations", "pod.spec"

  int64_t grace_seconds() const { return termination_grace_period_seconds.value_or(30); }

  bool runs_to_completion() const {
    return kind == WorkloadKind::job || kind == WorkloadKind::cron_job;
  }
};

constexpr std::string_view to_string(WorkloadKind kind) {
  return kWorkloadKindNames[static_cast<size_t>(kind)];
}

// Reads the first workload in a file ("-" = stdin), for `lab -f` and `sim -f`: the first one that
// is rolled (a chart's migration Job before its Deployment is skipped); a Job or CronJob only
// when the file holds nothing else. Returns nullopt when the file holds no workload. Throws Error
// "file:line:col: message" on unreadable or invalid input.
std::optional<Workload> first_workload(const std::string& path_or_dash);

}  // namespace zerodrop::kube
