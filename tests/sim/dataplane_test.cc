#include "sim/dataplane.h"

#include <gtest/gtest.h>

#include "sim/control_plane.h"

namespace zerodrop::sim {
namespace {

Options lab_rollout() {
  Options o;
  o.profile = load_profile("lab");
  o.nodes = 3;
  o.replicas = 3;
  o.readiness_period = 0.2;
  return o;
}

// The lab's routers apply changes in write order (a change waits for the one before it), each
// no sooner than its own 1..3 s delay: so does the sim's lab profile.
TEST(Routers, LabProfileAppliesEveryChangeInOrder) {
  Options o = lab_rollout();
  Random random(7);
  ControlPlane control = simulate_control_plane(o, random);
  Routers routers(o, control, 11);
  ASSERT_TRUE(routers.in_order());
  ASSERT_GT(control.writes.size(), 6u);
  for (int r = 0; r < routers.count(); ++r) {
    std::vector<double> applied;
    uint64_t events = 0;
    routers.apply_times(r, applied, events);
    for (size_t w = 0; w < applied.size(); ++w) {
      EXPECT_GE(applied[w], control.writes[w].commit + 1.0);
      if (w > 0) {
        EXPECT_GE(applied[w], applied[w - 1]);
      }
    }
  }
}

// Probes start with the process; the lab's examples listen 10 ms later, so the first probe fails
// and a new pod is Ready one period after it started, whatever the probe.
TEST(ControlPlaneProbes, FirstProbeBeforeTheListenerWaitsAPeriod) {
  for (Readiness readiness : {Readiness::probed, Readiness::lies}) {
    Options o = lab_rollout();
    o.readiness = readiness;
    Random random(3);
    ControlPlane control = simulate_control_plane(o, random);
    for (const PodTimeline& p : control.pods) {
      if (!p.old && p.started != kNever) {
        EXPECT_NEAR(p.ready - p.started, 0.2, 1e-9);
        EXPECT_NEAR(p.serving_from - p.started, 0.01, 1e-9);
      }
    }
  }
}

}  // namespace
}  // namespace zerodrop::sim
