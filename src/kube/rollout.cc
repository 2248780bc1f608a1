#include "kube/rollout.h"

#include <algorithm>

namespace zerodrop::kube {

std::optional<std::string> invalid_limits(const IntOrPercent& max_surge,
                                          const IntOrPercent& max_unavailable) {
  if (max_surge.value() == 0 && max_unavailable.value() == 0) {
    return "maxSurge and maxUnavailable may not both be 0 (the rollout could not progress; the "
           "API server rejects such a Deployment)";
  }
  return std::nullopt;
}

RolloutLimits resolve_limits(const IntOrPercent& max_surge, const IntOrPercent& max_unavailable,
                             int replicas) {
  RolloutLimits limits;
  limits.replicas = replicas;
  limits.max_surge = static_cast<int>(max_surge.resolve(replicas, Round::up));
  limits.max_unavailable = static_cast<int>(max_unavailable.resolve(replicas, Round::down));
  if (limits.max_surge == 0 && limits.max_unavailable == 0) {
    limits.max_unavailable = 1;  // ResolveFenceposts: the rollout must be able to progress
  }
  return limits;
}

bool available(bool ready, bool terminating, std::optional<Duration> ready_for,
               Duration min_ready) {
  return ready && !terminating && ready_for && *ready_for >= min_ready;
}

RolloutPlan plan_rollout(const std::vector<PodView>& pods, int revision,
                         const RolloutLimits& limits) {
  std::vector<const PodView*> old_pods;
  int new_pods = 0;
  int new_available = 0;
  int old_available = 0;
  for (const PodView& p : pods) {
    if (p.terminating) {
      continue;
    }
    if (p.revision == revision) {
      ++new_pods;
      new_available += p.available ? 1 : 0;
    } else {
      old_pods.push_back(&p);
      old_available += p.available ? 1 : 0;
    }
  }
  RolloutPlan plan;
  // Scale up the new ReplicaSet (NewRSNewReplicas).
  int total = new_pods + static_cast<int>(old_pods.size());
  int max_total = limits.replicas + limits.max_surge;
  plan.create = std::max(0, std::min(max_total - total, limits.replicas - new_pods));
  new_pods += plan.create;
  total += plan.create;
  // Scale down old ReplicaSets (reconcileOldReplicaSets).
  int min_available = limits.replicas - limits.max_unavailable;
  int max_scaled_down = total - min_available - (new_pods - new_available);
  // Unhealthy old pods go first (cleanupUnhealthyReplicas); they do not lower availability.
  std::stable_partition(old_pods.begin(), old_pods.end(),
                        [](const PodView* p) { return !p->available; });
  int removable_available = old_available + new_available - min_available;
  for (const PodView* p : old_pods) {
    if (max_scaled_down <= 0) {
      break;
    }
    if (p->available) {
      if (removable_available <= 0) {
        break;
      }
      --removable_available;
    }
    plan.remove.push_back(p->id);
    --max_scaled_down;
  }
  return plan;
}

bool rollout_complete(const std::vector<PodView>& pods, int revision, int replicas) {
  int available = 0;
  for (const PodView& p : pods) {
    if (p.terminating) {
      continue;
    }
    if (p.revision != revision || !p.available) {
      return false;
    }
    ++available;
  }
  return available == replicas;
}

}  // namespace zerodrop::kube
