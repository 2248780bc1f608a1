#pragma once

#include <string>

#include "lab/lab.h"

namespace zerodrop::lab {

// Fills `options` from the first Deployment / StatefulSet (or other workload) in `path`:
// replicas, maxSurge / maxUnavailable, minReadySeconds, terminationGracePeriodSeconds, and the
// container's preStop, readiness and liveness probes and first port. `container` names the
// container ("" = the first main one, kube::serving_container). Throws Error "file:line:col: …"
// for a workload lab cannot roll (kube::require_rolling_update) or an unsupported handler.
void apply_manifest(const std::string& path, const std::string& container, Options& options);

// The new version's pod (--to-file): `base` with the command (command + args), the literal env,
// preStop and probes of the first workload's container in `path`. Throws Error "file:…" when the
// container has neither command nor args (the lab runs no images) or a handler is unsupported.
PodSpec new_version_of(const std::string& path, const std::string& container, PodSpec base);

}  // namespace zerodrop::lab
