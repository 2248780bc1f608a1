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

// The pods run the first workload's container as an image (lab -f without a command): its
// image, command, args, env, runAsUser and lifecycle.stopSignal. Throws Error "file: …" when the
// container names no image or an unknown stop signal.
void run_image(const std::string& path, const std::string& container, RuntimeKind runtime,
               Options& options);

// The new version's pod (--to-file): `base` with the command (command + args), the literal env,
// preStop and probes of the first workload's container in `path`; with containers, its image too.
// Throws Error "file:…" when a process pod's container has neither command nor args, or a handler
// is unsupported.
PodSpec new_version_of(const std::string& path, const std::string& container, PodSpec base);

}  // namespace zerodrop::lab
