#pragma once

#include <map>
#include <mutex>
#include <optional>
#include <string>

#include <nlohmann/json.hpp>

#include "kubeapi/objects.h"
#include "kubeapi/store.h"
#include "record/run_record.h"

namespace zerodrop::kubeapi {

// The API's view of the lab, folded from the lab's own run-record events: Pods, ReplicaSets,
// the Deployment's status, EndpointSlices and core/v1 Events change in the Store the moment the
// lab records the event that changes them, so nothing served contradicts events.ndjson.
// Thread-safe (events arrive from the lab's control thread; refresh from anywhere).
class Projection {
public:
  Projection(Store& store, ClusterInfo info);

  // Stores the objects that exist from the start: namespaces, nodes, the Service, the Deployment.
  void publish_initial();
  // Folds one lab event (any kind; those that change no object are ignored).
  void observe(const record::Event& event);  // its pod named as ClusterInfo::pod_prefix says
  // Re-derives what changes with time alone (availability after minReadySeconds) at `now`.
  void refresh(record::Micros now);

  const ClusterInfo& info() const { return info_; }

  // Store keys of the resources the projection writes.
  static constexpr const char* kPods = "pods";
  static constexpr const char* kEvents = "events";
  static constexpr const char* kDeployments = "apps/deployments";
  static constexpr const char* kReplicaSets = "apps/replicasets";
  static constexpr const char* kSlices = "discovery.k8s.io/endpointslices";

private:
  struct Exit {
    record::Micros started{0};
    record::Micros finished{0};
    std::optional<int> code;
    std::optional<int> signal;
  };

  struct PodState {
    std::string name, ip, node;
    uint16_t port = 0;
    int revision = 1;
    record::Micros created{0};
    std::optional<record::Micros> started;  // the running container's start
    bool ready = false;
    record::Micros ready_changed{0};
    std::optional<record::Micros> deletion;
    int restarts = 0;
    std::optional<Exit> terminated;  // the current container exited
    std::optional<Exit> last_state;  // the previous container, after a restart
  };

  struct EndpointState {
    std::string ip;
    uint16_t port = 0;
    record::Conditions conditions;
  };

  void on_pod_created(const record::Event& e);
  void on_rollout_started(const record::Event& e);
  void on_endpoint(const record::Event& e);
  void pod_event(const record::Event& e);
  nlohmann::json pod_object(const PodState& pod) const;
  void put_pod(const PodState& pod);
  void ensure_replica_set(int revision, record::Micros t);
  void update_status(record::Micros now);
  void put_slices(record::Micros t);
  void emit(const nlohmann::json& involved, const std::string& reason, const std::string& message,
            const std::string& type, const std::string& component, record::Micros t);
  nlohmann::json pod_ref(const std::string& pod) const;

  Store& store_;
  ClusterInfo info_;
  std::mutex mutex_;
  std::map<std::string, PodState> pods_;
  std::map<std::string, EndpointState> endpoints_;
  std::map<int, std::string> replica_sets_;         // revision -> name
  std::map<std::string, std::string> event_names_;  // aggregation key -> event name
  std::map<std::string, record::Micros> slices_;    // slices stored -> creation time
  std::map<int, nlohmann::json> templates_;         // revision -> pod template
  int revision_ = 1;
  int observed_generation_ = 1;
  int event_serial_ = 0;
};

}  // namespace zerodrop::kubeapi
