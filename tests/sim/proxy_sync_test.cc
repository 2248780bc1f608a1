// kube-proxy's syncs in the sim (docs/sim.md, "Proxy-sync loss"): every sync of the Service's
// rules loses P x the node's connects per second (docs/dataplane-sync.md's measured window), P
// by default nftables mode's measured figure and 0 in iptables mode. The closed form rebuilds
// the run's routers and counts their syncs.
#include <cmath>

#include <gtest/gtest.h>

#include "sim/control_plane.h"
#include "sim/dataplane.h"
#include "sim/simulator.h"

namespace zerodrop::sim {
namespace {

using record::Hole;

double sync_expected(const Result& r, Hole h) {
  return r.expected[static_cast<size_t>(h)];
}

Options sync_rollout(Dataplane dataplane) {
  Options o;
  o.profile = load_profile("gke");
  o.dataplane = dataplane;
  o.nodes = 50;
  o.replicas = 10;
  o.rate = 100'000;
  o.keepalive = Keepalive::off;  // every request connects
  o.app = App::graceful;
  o.prestop = 60;
  o.grace = 90;
  return o;
}

// The syncs every router of the run makes that start before its end.
double syncs_in_run(const Options& o, double end) {
  Random random(o.seed);
  ControlPlane control = simulate_control_plane(o, random);
  Routers routers(o, control, o.seed ^ kRouterSalt);
  double syncs = 0;
  for (int r = 0; r < routers.count(); ++r) {
    std::vector<double> applied;
    std::vector<std::pair<double, double>> runs;
    uint64_t events = 0;
    routers.apply_times(r, applied, events, &runs);
    for (const auto& run : runs) {
      syncs += run.first < end ? 1 : 0;
    }
  }
  return syncs;
}

TEST(ProxySyncLoss, EachSyncLosesTheMeasuredWindowOfConnects) {
  Options o = sync_rollout(Dataplane::nftables);
  Result r = simulate(o);
  double syncs = syncs_in_run(o, r.end);
  ASSERT_GT(syncs, 2.0 * o.nodes);  // at least a Ready, a terminating and a removal per node
  double per_node_rate = o.rate / o.nodes;
  EXPECT_NEAR(sync_expected(r, Hole::proxy_sync_loss), syncs * per_node_rate * kNftablesSyncLoss,
              1e-9 * syncs * per_node_rate);
  EXPECT_NEAR(kNftablesSyncLoss, 5.96e-7, 0.01e-7);  // 16 / (8,948 x 3,000)
  o.proxy_sync_loss = 1e-3;
  EXPECT_NEAR(sync_expected(simulate(o), Hole::proxy_sync_loss), syncs * per_node_rate * 1e-3,
              1e-9 * syncs * per_node_rate);
}

TEST(ProxySyncLoss, NftablesRefusesTheLostConnect) {
  Options o = sync_rollout(Dataplane::nftables);
  o.proxy_sync_loss = 0.01;
  Result r = simulate(o);
  uint64_t refused = 0, timed_out = 0;
  for (const record::TimeBucket& b : r.record.buckets) {
    refused += b.outcomes[static_cast<size_t>(record::Outcome::connect_refused)];
    timed_out += b.outcomes[static_cast<size_t>(record::Outcome::connect_timeout)];
  }
  EXPECT_GT(r.failures[static_cast<size_t>(Hole::proxy_sync_loss)], 0U);
  EXPECT_GE(refused, r.failures[static_cast<size_t>(Hole::proxy_sync_loss)]);
  EXPECT_EQ(timed_out, 0U);
}

TEST(ProxySyncLoss, IptablesLosesNoneUnlessTold) {
  Options o = sync_rollout(Dataplane::iptables);
  EXPECT_EQ(sync_expected(simulate(o), Hole::proxy_sync_loss), 0.0);
  o.proxy_sync_loss = 1e-3;
  Result told = simulate(o);
  EXPECT_NEAR(sync_expected(told, Hole::proxy_sync_loss),
              syncs_in_run(o, told.end) * o.rate / o.nodes * 1e-3, 1e-6);
  Options lab = sync_rollout(Dataplane::iptables);
  lab.profile = load_profile("lab");  // the lab's direct propagation: no syncs to lose in
  lab.proxy_sync_loss = 0.5;
  EXPECT_EQ(sync_expected(simulate(lab), Hole::proxy_sync_loss), 0.0);
}

}  // namespace
}  // namespace zerodrop::sim
