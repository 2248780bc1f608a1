// kube-proxy's IPVS mode and its sync batching (docs/sim.md, "IPVS and minSyncPeriod"): a
// removed real server gets weight 0, so new connections stop at the same apply as in iptables
// mode; with net.ipv4.vs.conn_reuse_mode 0 (kube-proxy on kernels before 5.9) a client cycling
// its source ports within IPVS's TIME_WAIT timeout routes as the node did one port cycle ago.
// The lab's fixed propagation makes each router's view a step function: closed forms below.
#include <algorithm>
#include <cmath>

#include <gtest/gtest.h>

#include "one_node.h"
#include "sim/control_plane.h"
#include "sim/dataplane.h"
#include "sim/simulator.h"

namespace zerodrop::sim {
namespace {

using record::Hole;

double ipvs_expected(const Result& r, Hole h) {
  return r.expected[static_cast<size_t>(h)];
}

TEST(Ipvs, ReuseLagIsThePortCycleWithinTimeWait) {
  EXPECT_DOUBLE_EQ(ipvs_reuse_lag(1000), 28.232);
  EXPECT_DOUBLE_EQ(ipvs_reuse_lag(236), 28'232.0 / 236);  // 119.6 s: still in TIME_WAIT
  EXPECT_EQ(ipvs_reuse_lag(235), 0.0);                    // 120.1 s: the entry expired
  EXPECT_EQ(ipvs_reuse_lag(0), 0.0);
}

// One old pod replaced by one new one (surge 1), a naive app, every request a new connection,
// one node that applies each change exactly 2 s after its commit.
Options one_for_one(int conn_reuse_mode) {
  Options o = one_node(2, 1, 1000, 1, 0);
  o.dataplane = Dataplane::ipvs;
  o.ipvs_conn_reuse_mode = conn_reuse_mode;
  o.readiness_period = 1;
  o.keepalive = Keepalive::off;
  o.request_duration = Distribution::fixed(0.001);
  o.duration = 120;
  return o;
}

TEST(Ipvs, ConnReuseModeZeroRoutesAPortCycleLate) {
  Options o = one_for_one(1);
  Random random(o.seed);
  ControlPlane control = simulate_control_plane(o, random);
  auto [old_pod, new_pod] = old_and_new(control);
  ASSERT_TRUE(old_pod && new_pod);
  double refuse = old_pod->refuse_from;  // naive: at TERM
  double stop = control.writes[static_cast<size_t>(old_pod->term_write)].commit + 2;
  double joined = control.writes[static_cast<size_t>(new_pod->ready_write)].commit + 2;
  // The old pod is deleted at the new one's Ready, which the node applies 2 s later: the
  // node's view is the old pod alone, then both, then the new one.
  ASSERT_LT(refuse, joined);
  ASSERT_LT(joined, stop);
  // Weight 0 at the node's apply: from its refusal the old pod takes every new connection until
  // the new pod joins, half of them until its stop.
  double on_time = o.rate * ((joined - refuse) + (stop - joined) / 2);
  EXPECT_NEAR(ipvs_expected(simulate(o), Hole::deregistration_race), on_time, 1e-6 * on_time);
  // conn_reuse_mode 0 at 1,000 connects/s: every SYN reuses a port of 28.232 s ago and goes
  // where that one went: the same view a cycle late, so the old pod takes every new connection
  // from its refusal until the new pod joined a cycle late, half of them until its stop a cycle
  // late.
  double lag = 28.232;
  double late = o.rate * ((joined - (refuse - lag)) + (stop - joined) / 2);
  EXPECT_NEAR(ipvs_expected(simulate(one_for_one(0)), Hole::deregistration_race), late,
              1e-6 * late);
  Options slow = one_for_one(0);
  slow.rate = 200;  // a 141 s cycle: the reused entries are gone, mode 0 changes nothing
  Options slow1 = slow;
  slow1.ipvs_conn_reuse_mode = 1;
  EXPECT_DOUBLE_EQ(ipvs_expected(simulate(slow), Hole::deregistration_race),
                   ipvs_expected(simulate(slow1), Hole::deregistration_race));
}

// The sync starts of router 0 of a gke-profile rollout.
std::vector<double> sync_starts(const Options& o) {
  Random random(o.seed);
  ControlPlane control = simulate_control_plane(o, random);
  Routers routers(o, control, o.seed ^ kRouterSalt);
  std::vector<double> applied;
  std::vector<std::pair<double, double>> runs;
  uint64_t events = 0;
  routers.apply_times(0, applied, events, &runs);
  std::vector<double> starts;
  for (const auto& run : runs) {
    starts.push_back(run.first);
  }
  return starts;
}

Options ipvs_rollout(Dataplane dataplane) {
  Options o;
  o.profile = load_profile("gke");
  o.dataplane = dataplane;
  o.nodes = 20;
  o.replicas = 40;
  return o;
}

// BoundedFrequencyRunner, burst 2: at most 2 syncs in any minSyncPeriod; a longer period
// batches more changes into fewer syncs. IPVS's default is no minimum (k/k v1alpha1 defaults).
TEST(Ipvs, MinSyncPeriodBatchesChanges) {
  for (double period : {1.0, 5.0}) {
    Options o = ipvs_rollout(Dataplane::ipvs);
    o.min_sync_period = period;
    std::vector<double> starts = sync_starts(o);
    ASSERT_GT(starts.size(), 2U);
    for (size_t i = 2; i < starts.size(); ++i) {
      EXPECT_GE(starts[i] - starts[i - 2], period - 1e-9) << "sync " << i;
    }
  }
  Options zero = ipvs_rollout(Dataplane::ipvs);
  Options one = zero, five = zero;
  one.min_sync_period = 1;
  five.min_sync_period = 5;
  size_t n0 = sync_starts(zero).size(), n1 = sync_starts(one).size(), n5 = sync_starts(five).size();
  EXPECT_GT(n0, n1);
  EXPECT_GT(n1, n5);
  zero.min_sync_period = 0;
  EXPECT_EQ(sync_starts(zero).size(), n0);  // IPVS's default: 0
  Options iptables = ipvs_rollout(Dataplane::iptables);
  Options iptables_one = iptables;
  iptables_one.min_sync_period = 1;
  EXPECT_EQ(sync_starts(iptables), sync_starts(iptables_one));  // iptables' default: 1 s
}

}  // namespace
}  // namespace zerodrop::sim
