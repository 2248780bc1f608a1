#pragma once

#include <string>
#include <vector>

namespace zerodrop::lab {

// What the rollout controller knows of one pod.
struct PodView {
  std::string name;
  int revision = 1;
  bool terminating = false;
  bool available = false;  // Ready for at least minReadySeconds, and not terminating
};

// Deployment rolling-update limits, already resolved from "25%" (surge rounded up, unavailable
// rounded down).
struct RolloutLimits {
  int replicas = 1;
  int max_surge = 1;
  int max_unavailable = 0;
};

// What one reconcile does: create pods of the current revision, delete these pods.
struct RolloutPlan {
  int create = 0;
  std::vector<std::string> remove;

  bool empty() const { return create == 0 && remove.empty(); }
};

// One reconcile of the Deployment controller's rolling update (pkg/controller/deployment/
// rolling.go): scale the new ReplicaSet up to replicas + maxSurge pods in total, then scale old
// ones down, unavailable old pods first, never below replicas - maxUnavailable available pods.
// Terminating pods count for neither (status.replicas excludes them). Also replaces deleted
// pods when nothing is old (ReplicaSet semantics). Pure.
RolloutPlan plan_rollout(const std::vector<PodView>& pods, int revision,
                         const RolloutLimits& limits);

// Every live pod is of `revision`, there are `replicas` of them and all are available.
bool rollout_complete(const std::vector<PodView>& pods, int revision, int replicas);

}  // namespace zerodrop::lab
