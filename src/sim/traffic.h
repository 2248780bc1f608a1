#pragma once

#include <array>
#include <vector>

#include "base/latency_histogram.h"
#include "record/run_record.h"
#include "sim/control_plane.h"
#include "sim/dataplane.h"
#include "sim/options.h"
#include "sim/tally.h"

namespace zerodrop::sim {

// What the traffic through every router cost: expected failures per bucket, hole and class, the
// propagation of each termination to each router, and the sampled routers' apply events.
struct Traffic {
  Tally tally;
  LatencyHistogram propagation;  // router applied a pod's termination - the pod's deletion
  std::vector<std::array<double, record::kHoleCount>> per_pod;  // expected failures
  std::vector<record::Event> router_events;
  uint64_t events = 0;
};

// Accounts the run's traffic router by router and pod by pod, in expected counts (no request is
// simulated one by one): failures follow from when each router routed to each pod and what the
// pod did at that moment. See docs/sim.md, "Traffic model".
Traffic account_traffic(const Options& options, const ControlPlane& control, const Routers& routers,
                        double end);

}  // namespace zerodrop::sim
