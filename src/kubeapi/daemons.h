#pragma once

#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "base/duration.h"
#include "kubeapi/jobs.h"
#include "kubeapi/objects.h"

namespace zerodrop::kubeapi {

// apps/v1 DaemonSets as the lab runs them: what the API server checks and defaults when one is
// written, the pods the DaemonSet controller makes of it (one per emulated node its
// nodeSelector admits), and its status. Pure functions over JSON: the lab's daemon runner holds
// the processes.

// Validates a DaemonSet written by a client and fills what the API server defaults
// (updateStrategy RollingUpdate with maxUnavailable 1, revisionHistoryLimit 10, the template's
// restartPolicy Always and terminationGracePeriodSeconds 30, generation 1, an empty status).
// Throws Error naming the first invalid field: no selector, a selector that does not select the
// template's labels, no container, a container without a command (the lab runs no image's
// entrypoint), a restartPolicy other than Always.
nlohmann::json admit_daemon_set(nlohmann::json ds);

// The controller-revision-hash of the DaemonSet's current template (ten characters of
// Kubernetes' alphabet): pods of another hash are of an older revision.
std::string revision_hash(const nlohmann::json& ds);

// One pod of a DaemonSet, as the daemon runner knows it.
struct DaemonPod {
  std::string name;
  std::string node;
  std::string hash;  // its template's revision_hash
  WallTime created;
  std::optional<WallTime> started;  // the running container's start
  std::optional<WallTime> deletion;
  Duration grace = std::chrono::seconds(30);
  int restarts = 0;
  // The last container that exited (its lastState, or its state while it waits to restart).
  std::optional<WallTime> exited_started;
  std::optional<WallTime> exited;
  std::optional<int> exit_code;
  std::optional<int> signal;
  std::string waiting;  // while not running: "ContainerCreating", "CrashLoopBackOff", …
  std::string waiting_message;
};

// The Pod object of `pod`: the DaemonSet's template with its labels plus
// controller-revision-hash and pod-template-generation, the ownerReference (controller),
// spec.nodeName, and status (Running and Ready while its container runs; restartCount,
// lastState; deletionTimestamp = deletion + grace).
nlohmann::json daemon_pod_object(const nlohmann::json& ds, const DaemonPod& pod);

// The DaemonSet's status: desiredNumberScheduled (`eligible` nodes), currentNumberScheduled,
// numberReady, updatedNumberScheduled, numberAvailable, numberUnavailable, numberMisscheduled,
// observedGeneration. Pods being deleted count for none.
nlohmann::json daemon_set_status(const nlohmann::json& ds, const std::vector<DaemonPod>& pods,
                                 int eligible);

// The emulated nodes the DaemonSet's template admits (its nodeSelector and nodeName).
std::vector<Node> daemon_nodes(const nlohmann::json& ds, const std::vector<Node>& nodes);

}  // namespace zerodrop::kubeapi
