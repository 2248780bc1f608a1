#pragma once

// The closed-form tests' scenario: one node of the lab's profile whose router applies each change
// exactly `propagation` seconds after its commit, so each router's view is a step function.

#include <utility>

#include "base/int_or_percent.h"
#include "sim/control_plane.h"
#include "sim/distribution.h"
#include "sim/options.h"
#include "sim/profile.h"

namespace zerodrop::sim {

// `replicas` replaced `surge` / `unavailable` at a time, `rate` requests/s, on one node.
inline Options one_node(double propagation, int replicas, double rate, int surge, int unavailable) {
  Options o;
  o.profile = load_profile("lab");
  o.profile.propagation = Distribution::fixed(propagation);
  o.nodes = 1;
  o.replicas = replicas;
  o.rate = rate;
  o.max_surge = IntOrPercent::count(surge);
  o.max_unavailable = IntOrPercent::count(unavailable);
  return o;
}

// The old and the new pod of a one-for-one rollout (either null when there is none).
inline std::pair<const PodTimeline*, const PodTimeline*> old_and_new(const ControlPlane& control) {
  const PodTimeline* old_pod = nullptr;
  const PodTimeline* new_pod = nullptr;
  for (const PodTimeline& p : control.pods) {
    (p.old ? old_pod : new_pod) = &p;
  }
  return {old_pod, new_pod};
}

}  // namespace zerodrop::sim
