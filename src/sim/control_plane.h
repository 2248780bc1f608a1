#pragma once

#include <limits>
#include <string>
#include <vector>

#include "record/run_record.h"
#include "sim/options.h"
#include "sim/random.h"

namespace zerodrop::sim {

inline constexpr double kNever = std::numeric_limits<double>::infinity();

// One pod's life in virtual seconds (kNever: did not happen in the run).
struct PodTimeline {
  std::string name;
  bool old = false;  // of the revision being replaced (running and Ready at t = 0)
  double created = 0;
  double started = 0;
  double serving_from = 0;  // truly able to answer (after warm-up)
  double ready = 0;         // kubelet's Ready (the probe passed)
  double deletion = kNever;
  double term = kNever;
  double kill = kNever;  // SIGKILL sent (only when the process outlived the grace period)
  double exit = kNever;
  double refuse_from = kNever;    // stops accepting new connections
  double idle_closed = kNever;    // closes its idle keep-alive connections (close_listener)
  double liveness_kill = kNever;  // its failing liveness probe killed it mid-drain
  double proxy_exit = kNever;     // its sidecar proxy stopped forwarding before the app exited
  double drain_start = kNever;    // from here in-flight requests only finish, none start
  int ready_write = -1;   // index of the slice write that made it ready (-1: ready from t = 0)
  int term_write = -1;    // the write that marked it terminating
  int remove_write = -1;  // the write that removed it
};

// One EndpointSlice write as committed by the API server.
struct SliceWrite {
  double commit = 0;
  int slice = 0;
  int endpoints = 0;                  // endpoints in the slice after the write
  int changed = 0;                    // endpoints this write changed
  int ready_after = 0;                // Ready endpoints in the service after it
  int serving_terminating_after = 0;  // serving and terminating endpoints after it
};

// What the control plane did: pod lives, slice writes in commit order, rollout times, events.
struct ControlPlane {
  std::vector<PodTimeline> pods;
  std::vector<SliceWrite> writes;
  int initial_ready = 0;
  double rollout_start = 0;
  double rollout_end = 0;
  uint64_t events = 0;                // discrete events processed
  std::vector<record::Event> record;  // pod lifecycle, endpoint changes, rollout steps
};

// Simulates the Deployment rollout (kube::plan_rollout: maxSurge, maxUnavailable resolved as the
// controller does, minReadySeconds), each pod's kubelet termination (kube::stop_times) and the
// EndpointSlice controller with its API token bucket.
ControlPlane simulate_control_plane(const Options& options, Random& random);

}  // namespace zerodrop::sim
