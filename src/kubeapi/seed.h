#pragma once

#include "kubeapi/objects.h"

namespace zerodrop::kubeapi {

class Store;

// Stores `count` more Deployments, seed-0001 … (in info.ns), each with its ReplicaSet (owned by
// it) and a headless Service selecting it: scaled to 0, rolled out (observedGeneration current,
// Available and Progressing NewReplicaSetAvailable), no pods. For benchmarks of clients that
// watch many Deployments (bench/watch_cost.sh: an idle `zerodrop watch` against 1,000); a
// client's rollout restart of one is observed at once and runs nothing.
void seed_deployments(Store& store, const ClusterInfo& info, int count);

}  // namespace zerodrop::kubeapi
