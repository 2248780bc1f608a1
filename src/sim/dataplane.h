#pragma once

#include <cstdint>
#include <string>
#include <utility>
#include <vector>

#include "sim/control_plane.h"
#include "sim/options.h"

namespace zerodrop::sim {

// The routers of a run (kube-proxy on every node, ingress controller pods or cloud LB nodes) and
// when each applies each slice write. Each router draws from its own random stream derived from
// the seed and its index, so routers can be computed one at a time in any order.
class Routers {
public:
  Routers(const Options& options, const ControlPlane& control, uint64_t seed);

  int count() const { return count_; }

  // Whether apply times follow write order (one watch stream, cumulative syncs).
  bool in_order() const;

  std::string name(int router) const;
  // kube-proxy's minSyncPeriod for this dataplane (--min-sync-period, else the profile's).
  double min_sync_period() const;
  // When `router` has applied every write (index = write): non-decreasing (also with a direct
  // propagation distribution, the lab's model), except for a cloud LB, where each change lands
  // on its own (see in_order()). Adds the discrete events processed (watch deliveries, syncs,
  // polls) to `events`.
  // With `syncs`, also each kube-proxy sync's run on that router, (start, end).
  void apply_times(int router, std::vector<double>& applied, uint64_t& events,
                   std::vector<std::pair<double, double>>* syncs = nullptr) const;
  // When a cloud LB node stops routing to a target that refuses from `refuse_from`, by health
  // checks (kNever for other dataplanes).
  double unhealthy_at(int router, double refuse_from) const;

private:
  void receive(Random& random, std::vector<double>& received) const;
  void kube_proxy(Random& random, const std::vector<double>& received, std::vector<double>& applied,
                  uint64_t& events, std::vector<std::pair<double, double>>* syncs) const;
  void ingress(Random& random, const std::vector<double>& received, std::vector<double>& applied,
               uint64_t& events) const;

  const Options& o_;
  const ControlPlane& control_;
  uint64_t seed_;
  int count_ = 0;
  double services_ = 0;  // services in the cluster (rule count)
  double cluster_endpoints_ = 0;
  std::vector<double> lb_controller_;  // cloud LB: when its controller acted on each write
};

}  // namespace zerodrop::sim
