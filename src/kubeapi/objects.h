#pragma once

#include <chrono>
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "base/duration.h"
#include "record/run_record.h"

namespace zerodrop::kubeapi {

// A node of the emulated cluster: its name and its router's address (the Service's per-node
// "ClusterIP").
struct Node {
  std::string name;
  std::string host;
  uint16_t port = 0;
};

// The static facts of the emulated cluster that the API objects show: the Deployment's name and
// spec, the nodes, and the wall-clock time of the run's t = 0 (API timestamps are wall-clock).
struct ClusterInfo {
  std::string ns = "default";
  std::string deployment = "web";
  // Before the lab's pod names in the API ("web-" + "pod-1"): several workloads in one API.
  std::string pod_prefix;
  std::string container = "app";
  std::vector<std::string> command;
  uint16_t port = 0;  // 0: each pod has its own port
  int replicas = 1;
  int min_available = 1;  // replicas - maxUnavailable, resolved: the Available condition
  std::string max_surge = "25%";
  std::string max_unavailable = "25%";
  Duration min_ready{0};
  Duration grace = std::chrono::seconds(30);
  std::optional<Duration> prestop_sleep;  // a sleep preStop, shown as exec ["sleep", "N"]
  std::string readiness_path;             // an httpGet readiness probe; empty: tcpSocket
  std::vector<Node> nodes;
  std::string k8s_version = "1.32";
  std::chrono::system_clock::time_point start_wall;
};

// The annotation on the Deployments the lab's workloads run (its value: "lab"): they cannot be
// deleted through the API, and a change of them is the lab's to act on.
inline constexpr const char* kWorkload = "zerodrop.dev/workload";

// RFC 3339 in UTC at second precision, as metav1.Time serializes.
std::string rfc3339(std::chrono::system_clock::time_point t);
// RFC 3339 in UTC with microseconds ("2026-12-01T15:04:05.123456Z"), as Go's RFC3339Nano writes
// the EndpointSlice controller's last-change-trigger-time (trailing zeros kept).
std::string rfc3339_micros(std::chrono::system_clock::time_point t);
// A stable UUID-shaped uid for `kind`/`name` in the run started at `start`.
std::string uid_of(const std::string& kind, const std::string& name,
                   std::chrono::system_clock::time_point start);
// The pod-template-hash of a revision (ten characters of Kubernetes' alphabet).
std::string template_hash(int revision);

nlohmann::json metadata(const ClusterInfo& info, const std::string& kind, const std::string& name,
                        record::Micros created);
// The Deployment with its spec and an empty status; generation 1.
nlohmann::json deployment_object(const ClusterInfo& info);
// The pod template of the Deployment (spec.template).
nlohmann::json pod_template(const ClusterInfo& info);
nlohmann::json replica_set_object(const ClusterInfo& info, const nlohmann::json& deployment,
                                  int revision, record::Micros created);
nlohmann::json service_object(const ClusterInfo& info);
nlohmann::json node_object(const ClusterInfo& info, const Node& node);
nlohmann::json namespace_object(const ClusterInfo& info, const std::string& name);
// A core/v1 Event about `involved` (an object's kind, name and uid).
nlohmann::json event_object(const ClusterInfo& info, const nlohmann::json& involved,
                            const std::string& reason, const std::string& message,
                            const std::string& type, const std::string& component, record::Micros t,
                            int serial);
// A reference to `object` (kind, namespace, name, uid, apiVersion) for ownerReferences and events.
nlohmann::json reference_to(const nlohmann::json& object);
// The ownerReferences entry a controller writes on what it owns: `controller` and
// `blockOwnerDeletion` true (garbage collection and kubectl's owner lookups read these).
nlohmann::json controller_reference(const std::string& api_version, const std::string& kind,
                                    const std::string& name, const nlohmann::json& uid);
// Marks `metadata` as the API server does when a pod is deleted at `deletion` with `grace`:
// deletionTimestamp = deletion + grace (whole seconds, rounded up), deletionGracePeriodSeconds.
void mark_deleting(nlohmann::json& metadata, std::chrono::system_clock::time_point deletion,
                   Duration grace);

// Where the lab's clock (microseconds since the run's start) is on the wall clock.
std::chrono::system_clock::time_point wall(const ClusterInfo& info, record::Micros t);

}  // namespace zerodrop::kubeapi
