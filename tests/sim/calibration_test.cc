// The default profile must reproduce the published propagation figures (docs/sim.md, Calibration):
// small clusters ~1-3 s; 5,000 nodes p50 ~5 s and p99 10-25 s (GCE 20-25 s, AWS 10-11 s).
#include <gtest/gtest.h>

#include "sim/simulator.h"

namespace zerodrop::sim {
namespace {

PropagationStats propagation(const char* profile, int nodes, int replicas) {
  Options o;
  o.profile = load_profile(profile);
  o.nodes = nodes;
  o.replicas = replicas;
  o.rate = 1000;
  o.record_events = false;
  return simulate(o).propagation;
}

TEST(Calibration, SmallClusterPropagatesInOneToThreeSeconds) {
  PropagationStats p = propagation("gke", 3, 10);
  EXPECT_GE(p.p50, 0.3);
  EXPECT_LE(p.p50, 2.0);
  EXPECT_LE(p.p99, 3.5);
}

TEST(Calibration, GkeAtFiveThousandNodes) {
  PropagationStats p = propagation("gke", 5000, 100);
  EXPECT_GE(p.p50, 3.5);
  EXPECT_LE(p.p50, 7.0);
  EXPECT_GE(p.p99, 18.0);
  EXPECT_LE(p.p99, 25.0);
}

TEST(Calibration, EksAtFiveThousandNodes) {
  PropagationStats p = propagation("eks", 5000, 100);
  EXPECT_GE(p.p50, 2.5);
  EXPECT_LE(p.p50, 7.0);
  EXPECT_GE(p.p99, 9.0);
  EXPECT_LE(p.p99, 13.0);
}

TEST(Calibration, NftablesIsFasterThanIptablesAtScale) {
  Options o;
  o.profile = load_profile("gke");
  o.nodes = 5000;
  o.replicas = 100;
  o.record_events = false;
  double iptables = simulate(o).propagation.p99;
  o.dataplane = Dataplane::nftables;
  EXPECT_LT(simulate(o).propagation.p99, iptables);
}

}  // namespace
}  // namespace zerodrop::sim
