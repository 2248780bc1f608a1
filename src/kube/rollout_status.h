#pragma once

#include <cstdint>
#include <string>

#include "kube/workload.h"

namespace zerodrop::kube {

// What a workload's controller reports about its rollout, one shape for every kind that rolls
// pods: Deployment, StatefulSet, DaemonSet and Argo Rollout. Read from the object's spec and
// status by the caller (watch reads the API's JSON); absent fields are their zero values.
struct RolloutStatusView {
  WorkloadKind kind = WorkloadKind::deployment;
  int64_t generation = 0;
  // status.observedGeneration; nullopt when the controller has not written one (an Argo
  // Rollout before v0.10 writes a hash there, which counts as observed).
  std::optional<int64_t> observed_generation;
  // Deployment, StatefulSet, Rollout: spec.replicas (1 when absent); DaemonSet:
  // status.desiredNumberScheduled.
  int64_t desired = 1;
  int64_t replicas = 0;   // status.replicas (DaemonSet: currentNumberScheduled)
  int64_t updated = 0;    // status.updatedReplicas (DaemonSet: updatedNumberScheduled)
  int64_t ready = 0;      // status.readyReplicas (DaemonSet: numberReady)
  int64_t available = 0;  // status.availableReplicas (DaemonSet: numberAvailable)
  // spec.updateStrategy.type of a StatefulSet or DaemonSet ("" reads as RollingUpdate, the
  // API server's default); "OnDelete" means the controller replaces no pod by itself.
  std::string update_strategy;
  int64_t partition = 0;            // StatefulSet spec.updateStrategy.rollingUpdate.partition
  std::string current_revision;     // StatefulSet status.currentRevision
  std::string update_revision;      // StatefulSet status.updateRevision
  bool paused = false;              // Deployment, Rollout: spec.paused
  std::string progressing_reason;   // Deployment: the Progressing condition's reason
  std::string progressing_message;  // and its message
  // Argo Rollout: status.phase (Healthy, Progressing, Paused, Degraded), status.message,
  // status.currentPodHash, status.stableRS.
  std::string phase;
  std::string phase_message;
  std::string current_pod_hash;
  std::string stable_rs;
};

// Where a workload's rollout stands, as its controller reports it.
enum class RolloutState {
  settled,   // no rollout under way (or a Deployment's status without its Progressing reason)
  rolling,   // under way
  complete,  // the controller reports every pod replaced (StatefulSet: up to the partition)
  failed,    // Deployment ProgressDeadlineExceeded; Rollout Degraded
  paused,    // Deployment or Rollout spec.paused
  manual,    // updateStrategy OnDelete: the controller replaces no pod, so it reports no end
};

struct RolloutStatus {
  RolloutState state = RolloutState::settled;
  std::string why;  // one line: what in the status says so
};

// The kind's rollout rules, as `kubectl rollout status` reads each kind (and Argo Rollouts'
// GetRolloutPhase for a Rollout):
// * Deployment: paused when spec.paused; not observed (observedGeneration < generation) is
//   rolling; Progressing ProgressDeadlineExceeded failed; Progressing NewReplicaSetAvailable
//   with updatedReplicas == replicas == spec.replicas complete; another Progressing reason
//   rolling; without the condition: rolling while replicas are not all updated, else settled.
// * StatefulSet (RollingUpdate): not observed rolling; complete when readyReplicas >=
//   spec.replicas and updatedReplicas >= spec.replicas - partition, and, with no partition,
//   currentRevision == updateRevision (the controller moves currentRevision once every pod is
//   updated and ready); else rolling. OnDelete: manual.
// * DaemonSet (RollingUpdate): not observed rolling; complete when updatedNumberScheduled and
//   numberAvailable reach desiredNumberScheduled; else rolling. OnDelete: manual.
// * Rollout: not observed rolling; spec.paused paused; phase Degraded failed; phase Healthy
//   with currentPodHash == stableRS complete; Progressing, and Paused by a step
//   (status.pauseConditions: a canary's pause step, a blue-green awaiting promotion), rolling.
// complete means "nothing left to do", so a settled workload reads complete too; the caller
// asks only while it follows a rollout. Pure.
RolloutStatus rollout_status(const RolloutStatusView& s);

}  // namespace zerodrop::kube
