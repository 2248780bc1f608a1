#pragma once

#include <string>
#include <string_view>

#include "kube/mark.h"
#include "kube/workload.h"

namespace zerodrop::kube {

// "file:line:col" of a mark in `file` ("file" alone when the position is unknown).
std::string where(const std::string& file, Mark mark);

// The container whose traffic `lab -f` and `sim -f` model: the one named `name`, or the first
// main container when `name` is empty. Native sidecars (init containers with restartPolicy:
// Always) stop after the main containers, so they are never it. Throws Error "file:line:col: …"
// naming the workload when there is no such container or `name` is a sidecar.
const Container& serving_container(const Workload& workload, std::string_view name);

// Throws Error "file:line:col: …" when the engines cannot roll `workload` as Kubernetes would:
// strategy Recreate or OnDelete (neither lab nor sim models them), or maxSurge and
// maxUnavailable both written as 0 (the API server rejects it).
void require_rolling_update(const Workload& workload);

}  // namespace zerodrop::kube
