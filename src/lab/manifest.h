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

}  // namespace zerodrop::lab
