#pragma once

#include <optional>
#include <string>

#include "kube/object.h"
#include "kube/workload.h"
#include "sim/options.h"

namespace zerodrop::sim {

// Copies what the simulator models from a workload into `options`: replicas, maxSurge and
// maxUnavailable, minReadySeconds, terminationGracePeriodSeconds, the preStop delay
// (kube::pre_stop_delay), the liveness probe, an Envoy/Istio sidecar proxy (plain or native, its
// drain from its env and proxy.istio.io/config) and the readiness probe (httpGet = probed
// truthfully, tcpSocket = lies; its period). `container` names the container ("" =
// kube::serving_container's choice). Throws Error "file:line:col: …" for an unknown container or a
// workload lab and sim cannot roll (kube::require_rolling_update). Returns "file:line:col: …"
// saying why when the preStop's delay cannot be known from the manifest (an httpGet, a program
// other than sleep); options.prestop is then left as it was, for the caller to require --prestop.
// The protocol the first Service of `objects` that selects the workload's pods declares by a
// port's appProtocol: grpc (any value naming grpc), h2 (kubernetes.io/h2c, h2c, http2), http1
// (another value), nullopt when no selecting Service names one.
std::optional<Protocol> service_protocol(const std::vector<kube::Object>& objects,
                                         const kube::Workload& workload);

std::optional<std::string> apply_workload(Options& options, const kube::Workload& workload,
                                          const std::string& container);

}  // namespace zerodrop::sim
