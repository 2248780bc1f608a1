#pragma once

#include <string>

#include "lab/lab.h"

namespace zerodrop::lab {

// Fills `options` from the first Deployment / StatefulSet (or other workload) in `path`:
// replicas, maxSurge / maxUnavailable, minReadySeconds, terminationGracePeriodSeconds, and the
// container's preStop, readiness and liveness probes and first port. `container` names the
// container ("" = the first). Throws Error naming the file and the problem.
void apply_manifest(const std::string& path, const std::string& container, Options& options);

}  // namespace zerodrop::lab
