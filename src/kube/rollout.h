#pragma once

#include <cstddef>
#include <optional>
#include <string>
#include <vector>

#include "base/duration.h"
#include "base/int_or_percent.h"

namespace zerodrop::kube {

// A Deployment's rolling-update limits resolved against its replicas.
struct RolloutLimits {
  int replicas = 1;
  int max_surge = 1;
  int max_unavailable = 0;
};

// The API server's validation of a Deployment's rollingUpdate: maxSurge and maxUnavailable may
// not both be written as 0 (the rollout could not progress). Returns why, or nullopt when valid.
std::optional<std::string> invalid_limits(const IntOrPercent& max_surge,
                                          const IntOrPercent& max_unavailable);

// The Deployment controller's ResolveFenceposts: maxSurge rounded up, maxUnavailable down, and
// when both resolve to 0 (e.g. 0 and 25% of 3) maxUnavailable becomes 1. Never throws.
RolloutLimits resolve_limits(const IntOrPercent& max_surge, const IntOrPercent& max_unavailable,
                             int replicas);

// What the rollout controller knows of one pod; `id` is the caller's handle for it.
struct PodView {
  size_t id = 0;
  int revision = 1;
  bool terminating = false;
  bool available = false;  // Ready for at least minReadySeconds, and not terminating
};

// Whether a Ready pod is available: Ready for at least minReadySeconds (Kubernetes'
// IsPodAvailable).
bool available(bool ready, bool terminating, std::optional<Duration> ready_for, Duration min_ready);

// What one reconcile does: create pods of the current revision, delete these pods (ids).
struct RolloutPlan {
  int create = 0;
  std::vector<size_t> remove;

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

}  // namespace zerodrop::kube
