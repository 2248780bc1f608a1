#include "kube/rollout_status.h"

#include <fmt/format.h>

namespace zerodrop::kube {

namespace {

bool observed(const RolloutStatusView& s) {
  return !s.observed_generation || *s.observed_generation >= s.generation;
}

RolloutStatus not_observed(const RolloutStatusView& s) {
  return {RolloutState::rolling,
          fmt::format("generation {} not yet observed (observedGeneration {})", s.generation,
                      s.observed_generation.value_or(0))};
}

RolloutStatus deployment_status(const RolloutStatusView& s) {
  if (s.paused) {
    return {RolloutState::paused, "spec.paused is true"};
  }
  if (!observed(s)) {
    return not_observed(s);
  }
  if (s.progressing_reason == "ProgressDeadlineExceeded") {
    return {RolloutState::failed,
            "Progressing False, ProgressDeadlineExceeded: " + s.progressing_message};
  }
  bool all_updated = s.updated == s.desired && s.replicas == s.desired;
  if (s.progressing_reason == "NewReplicaSetAvailable" && all_updated) {
    return {
        RolloutState::complete,
        fmt::format("Progressing NewReplicaSetAvailable, {} of {} updated", s.desired, s.desired)};
  }
  if (!s.progressing_reason.empty() && s.progressing_reason != "NewReplicaSetAvailable") {
    return {RolloutState::rolling, "Progressing " + s.progressing_reason};
  }
  if (s.updated < s.desired || s.replicas > s.desired) {
    return {RolloutState::rolling,
            fmt::format("{} of {} replicas updated, {} in all", s.updated, s.desired, s.replicas)};
  }
  return {RolloutState::settled, "no Progressing NewReplicaSetAvailable yet"};
}

RolloutStatus on_delete() {
  return {RolloutState::manual,
          "updateStrategy OnDelete: the controller replaces no pod, so it reports no rollout end"};
}

RolloutStatus stateful_set_status(const RolloutStatusView& s) {
  if (s.update_strategy == "OnDelete") {
    return on_delete();
  }
  if (!observed(s) || !s.observed_generation || *s.observed_generation == 0) {
    return not_observed(s);
  }
  if (s.ready < s.desired) {
    return {RolloutState::rolling, fmt::format("{} of {} pods ready", s.ready, s.desired)};
  }
  int64_t to_update = s.desired - s.partition;
  if (s.updated < to_update) {
    return {RolloutState::rolling,
            fmt::format("{} of {} pods at revision {}{}", s.updated, to_update, s.update_revision,
                        s.partition > 0 ? fmt::format(" (partition {})", s.partition) : "")};
  }
  if (s.partition > 0) {
    return {RolloutState::complete,
            fmt::format("partitioned rollout complete: {} pods at revision {} (partition {})",
                        s.updated, s.update_revision, s.partition)};
  }
  if (s.current_revision != s.update_revision) {
    return {RolloutState::rolling, fmt::format("currentRevision {} is not yet updateRevision {}",
                                               s.current_revision, s.update_revision)};
  }
  return {RolloutState::complete,
          fmt::format("{} pods at revision {}, currentRevision == updateRevision", s.updated,
                      s.update_revision)};
}

RolloutStatus daemon_set_status(const RolloutStatusView& s) {
  if (s.update_strategy == "OnDelete") {
    return on_delete();
  }
  if (!observed(s)) {
    return not_observed(s);
  }
  if (s.updated < s.desired) {
    return {RolloutState::rolling,
            fmt::format("{} of {} scheduled pods updated", s.updated, s.desired)};
  }
  if (s.available < s.desired) {
    return {RolloutState::rolling,
            fmt::format("{} of {} updated pods available", s.available, s.desired)};
  }
  return {RolloutState::complete,
          fmt::format("{} of {} pods updated and available", s.updated, s.desired)};
}

RolloutStatus argo_rollout_status(const RolloutStatusView& s) {
  if (!observed(s)) {
    return not_observed(s);
  }
  if (s.paused) {
    return {RolloutState::paused, "spec.paused is true"};
  }
  std::string message = s.phase_message.empty() ? "" : ": " + s.phase_message;
  if (s.phase == "Degraded") {
    return {RolloutState::failed, "phase Degraded" + message};
  }
  if (s.phase == "Healthy") {
    if (!s.stable_rs.empty() && s.current_pod_hash == s.stable_rs) {
      return {RolloutState::complete,
              fmt::format("phase Healthy, stableRS {} == currentPodHash", s.stable_rs)};
    }
    return {RolloutState::rolling, fmt::format("phase Healthy but stableRS {} != currentPodHash {}",
                                               s.stable_rs, s.current_pod_hash)};
  }
  if (s.phase.empty() && !s.stable_rs.empty() && s.current_pod_hash == s.stable_rs) {
    return {RolloutState::settled, "no phase yet"};
  }
  return {RolloutState::rolling, "phase " + (s.phase.empty() ? "unset" : s.phase) + message};
}

}  // namespace

RolloutStatus rollout_status(const RolloutStatusView& s) {
  switch (s.kind) {
    case WorkloadKind::stateful_set:
      return stateful_set_status(s);
    case WorkloadKind::daemon_set:
      return daemon_set_status(s);
    case WorkloadKind::rollout:
      return argo_rollout_status(s);
    default:
      return deployment_status(s);
  }
}

}  // namespace zerodrop::kube
