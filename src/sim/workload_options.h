#pragma once

#include <string>

#include "kube/workload.h"
#include "sim/options.h"

namespace zerodrop::sim {

// Copies what the simulator models from a workload into `options`: replicas, maxSurge and
// maxUnavailable, terminationGracePeriodSeconds, the preStop delay (native sleep, or an exec
// "sleep N"), and the readiness probe (httpGet = probed truthfully, tcpSocket = lies; its period).
// `container` names the container ("" = the first). Throws Error for an unknown container or a
// strategy the simulator does not roll (Recreate, OnDelete).
void apply_workload(Options& options, const kube::Workload& workload, const std::string& container);

}  // namespace zerodrop::sim
