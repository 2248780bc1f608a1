#pragma once

#include <array>
#include <cstdint>

#include "record/run_record.h"
#include "sim/options.h"

namespace zerodrop::sim {

// Quantiles of the time from a pod's deletion until a router applied its termination, over
// every (router, deleted pod) pair, in seconds.
struct PropagationStats {
  uint64_t samples = 0;
  double p50 = 0, p90 = 0, p99 = 0, max = 0;
};

// One simulated rollout.
struct Result {
  record::RunRecord record;  // engine "sim": events, buckets with failures_by_hole
  std::array<uint64_t, record::kHoleCount> failures{};  // sampled counts per hole
  std::array<double, record::kHoleCount> expected{};    // their expected values
  uint64_t requests = 0;
  uint64_t failed = 0;
  PropagationStats propagation;
  double rollout_seconds = 0;  // rollout start to the Deployment being complete
  double end = 0;              // virtual seconds simulated
  uint64_t events = 0;         // discrete events processed (control plane + routers)
  int routers = 0;
};

// The salt of the routers' random streams (Routers' seed is the run's seed xor it): a test
// rebuilding a run's routers uses it.
inline constexpr uint64_t kRouterSalt = 0x5EED0F20A7E5ULL;

// Checks options for values the model cannot run (throws Error naming the flag).
void validate(const Options& options);

// Runs one rollout: control plane in discrete events, routers one by one, traffic in expected
// counts sampled per bucket. Same options and seed, same result.
Result simulate(const Options& options);

}  // namespace zerodrop::sim
