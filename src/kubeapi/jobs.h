#pragma once

#include <chrono>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "base/duration.h"
#include "kubeapi/objects.h"

namespace zerodrop::kubeapi {

// batch/v1 Jobs as the lab runs them: what the API server checks and defaults when a Job is
// created, the pods the job controller makes of it, where the scheduler puts them, and the
// Job's status. Pure functions over JSON: the lab's job runner holds the processes.

using WallTime = std::chrono::system_clock::time_point;

// Validates a created Job and fills what the API server defaults: completions and parallelism
// (1), completionMode (NonIndexed), backoffLimit (6), the controller-uid selector and template
// labels, restartPolicy checks, an empty status. Throws Error naming the first invalid field.
nlohmann::json admit_job(nlohmann::json job, const ClusterInfo& info, WallTime now);

// One pod of a Job, as the job runner knows it.
struct JobPod {
  std::string name;
  std::string job;
  int index = -1;    // the completion index; -1 for a NonIndexed Job
  std::string node;  // empty: not scheduled (Pending, Unschedulable)
  std::string why_unscheduled;
  WallTime created;
  std::optional<WallTime> started;
  std::optional<WallTime> finished;
  std::optional<WallTime> deletion;  // deletionTimestamp = deletion + grace, as served
  Duration grace = std::chrono::seconds(30);
  std::optional<int> exit_code;
  std::optional<int> signal;

  bool succeeded() const { return finished && exit_code == 0; }

  bool failed() const { return finished && exit_code != 0; }
};

// The Pod object of `pod`: the Job's template with the job controller's labels, annotations
// and ownerReference, spec.nodeName, and status (phase, conditions, containerStatuses).
nlohmann::json job_pod_object(const nlohmann::json& job, const JobPod& pod,
                              const ClusterInfo& info);

// Where the scheduler puts a pod with `spec` and `labels`: spec.nodeName, else a node matching
// spec.nodeSelector and, with a required podAntiAffinity on kubernetes.io/hostname, holding no
// running pod the affinity term selects among `pods`; of those the one with the fewest running
// pods of the same Job, then the first. No node: why_not says why, as the scheduler would.
struct Placement {
  std::optional<std::string> node;
  std::string why_not;
};

Placement schedule(const nlohmann::json& spec, const nlohmann::json& labels,
                   const std::vector<Node>& nodes, const std::vector<nlohmann::json>& pods);

// The Job's status from its pods: active, ready, succeeded, failed, completedIndexes,
// startTime and, once `finished`, completionTime and the Complete or (with `failure`, the
// reason the job controller gave up: BackoffLimitExceeded, DeadlineExceeded) Failed condition.
nlohmann::json job_status(const nlohmann::json& job, const std::vector<JobPod>& pods,
                          const std::optional<std::string>& failure, WallTime start,
                          std::optional<WallTime> finished);

// The environment of a Job pod's first container: its env (values and the downward API's
// metadata.name, metadata.namespace, spec.nodeName, status.podIP, status.hostIP), the Indexed
// Job's JOB_COMPLETION_INDEX, and the service links of `services` (SVC_SERVICE_HOST/_PORT) as
// seen from `node`: each Service's address on that node is that node's router.
std::vector<std::pair<std::string, std::string>> job_pod_env(
    const nlohmann::json& pod, const std::vector<nlohmann::json>& services, const Node& node);

// The container's command + args with $(VAR) references to `env` expanded as kubelet does
// ($$ is a literal $, unknown references stay as written). Throws Error when there is none.
std::vector<std::string> container_argv(
    const nlohmann::json& container, const std::vector<std::pair<std::string, std::string>>& env);

}  // namespace zerodrop::kubeapi
