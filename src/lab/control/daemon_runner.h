#pragma once

#include <chrono>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "kubeapi/daemons.h"
#include "kubeapi/objects.h"
#include "lab/control/pod_process.h"

namespace zerodrop::kubeapi {
class Store;
}  // namespace zerodrop::kubeapi

namespace zerodrop::lab {

class Recorder;

// The DaemonSet controller and kubelet of the lab's API for apps/v1 DaemonSets that clients
// write: one pod per emulated node the template admits, each run as a process on this host as
// JobRunner runs a Job's pod (the node's view of the Services, the downward API, "/zerodrop" is
// this zerodrop, stdout and stderr the pod's log). Level-triggered as the real controller: each
// poll after the store changed compares the DaemonSets stored with the pods it runs, makes the
// missing ones, replaces the pods of an older template (each node's old pod stopped first, the
// new one made once it is gone), and stops the pods of a DaemonSet that is gone (deleted, or
// collected with its owner). A container that exits is restarted after kubelet's back-off
// (10 s, doubling to 5 min; restartCount counts it); a deleted pod is replaced by a new one.
// Pods and the DaemonSets' status are kept in the store. Control thread only.
class DaemonRunner {
public:
  DaemonRunner(kubeapi::Store& store, kubeapi::ClusterInfo info, Recorder& recorder);
  ~DaemonRunner();  // kills every pod still running (the lab ends)
  DaemonRunner(const DaemonRunner&) = delete;
  DaemonRunner& operator=(const DaemonRunner&) = delete;

  // Deletes `pod` as kubelet would (SIGTERM, SIGKILL after its grace) when it is a DaemonSet's
  // pod; false when it is not one.
  bool delete_pod(const std::string& pod);
  // Reaps exited containers, restarts those due, kills those past their grace, reconciles the
  // pods with the stored DaemonSets when the store changed, and stores every status that
  // changed. Call it often (every loop of the lab's control thread).
  void poll();

private:
  struct Pod {
    kubeapi::DaemonPod state;
    std::string owner_uid;      // the DaemonSet's uid: a DaemonSet created again is another owner
    nlohmann::json daemon_set;  // as it was when the pod was made: its template
    std::optional<PodProcess> process;
    std::optional<std::chrono::steady_clock::time_point> restart_at;
    bool gone = false;
  };

  void reap(Pod& pod);
  void reconcile();
  void reconcile_one(const nlohmann::json& ds);
  void make_pod(const nlohmann::json& ds, const kubeapi::Node& node);
  void start(Pod& pod);
  void kill(Pod& pod, const std::string& why);
  void put(const Pod& pod);
  const kubeapi::Node* node_named(const std::string& name) const;

  kubeapi::Store& store_;
  kubeapi::ClusterInfo info_;
  Recorder& recorder_;
  std::map<std::string, std::unique_ptr<Pod>> pods_;
  uint64_t seen_rv_ = 0;  // the store's resourceVersion at the last reconcile
  std::map<std::string, nlohmann::json> statuses_;  // DaemonSet name -> status last stored
};

}  // namespace zerodrop::lab
