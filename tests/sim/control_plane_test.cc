#include "sim/control_plane.h"

#include <gtest/gtest.h>

#include "base/error.h"

namespace zerodrop::sim {
namespace {

Options small(int replicas, const char* surge, const char* unavailable) {
  Options o;
  o.profile = load_profile("lab");
  o.replicas = replicas;
  o.max_surge = IntOrPercent::parse(surge, "maxSurge");
  o.max_unavailable = IntOrPercent::parse(unavailable, "maxUnavailable");
  return o;
}

int max_pods_alive(const ControlPlane& cp, bool count_only_available) {
  // Sample the pod counts at every pod event time.
  int best = 0;
  for (const PodTimeline& probe : cp.pods) {
    for (double t : {probe.created, probe.ready, probe.deletion}) {
      if (t == kNever) {
        continue;
      }
      int alive = 0;
      for (const PodTimeline& p : cp.pods) {
        bool counted =
            p.created <= t && t < p.deletion && (!count_only_available || (p.old || p.ready <= t));
        alive += counted ? 1 : 0;
      }
      best = std::max(best, alive);
    }
  }
  return best;
}

TEST(ControlPlane, ReplacesEveryPodAndFinishes) {
  Options o = small(10, "25%", "25%");
  Random random(1);
  ControlPlane cp = simulate_control_plane(o, random);
  int old_deleted = 0, new_ready = 0;
  for (const PodTimeline& p : cp.pods) {
    old_deleted += p.old && p.deletion != kNever ? 1 : 0;
    new_ready += !p.old && p.ready != kNever ? 1 : 0;
    if (p.old) {
      EXPECT_GE(p.term_write, 0) << p.name;
      EXPECT_GE(p.remove_write, p.term_write) << p.name;
      EXPECT_LE(p.term, p.exit) << p.name;
    }
  }
  EXPECT_EQ(old_deleted, 10);
  EXPECT_EQ(new_ready, 10);
  EXPECT_GT(cp.rollout_end, cp.rollout_start);
  EXPECT_EQ(cp.writes.back().ready_after, 10);
}

TEST(ControlPlane, MaxSurgeBoundsThePodsCounted) {
  Options o = small(8, "2", "0");  // at most 10 non-terminating pods
  Random random(2);
  ControlPlane cp = simulate_control_plane(o, random);
  EXPECT_LE(max_pods_alive(cp, false), 10);
}

TEST(ControlPlane, MaxUnavailableZeroKeepsReplicasAvailable) {
  Options o = small(4, "1", "0");
  Random random(3);
  ControlPlane cp = simulate_control_plane(o, random);
  // Whenever an old pod is deleted, at least 4 other pods are available.
  for (const PodTimeline& d : cp.pods) {
    if (d.deletion == kNever) {
      continue;
    }
    int available = 0;
    for (const PodTimeline& p : cp.pods) {
      available +=
          p.created <= d.deletion && p.ready <= d.deletion && d.deletion < p.deletion ? 1 : 0;
    }
    EXPECT_GE(available, 3) << d.name;  // 4 minus the one deleted now
  }
}

TEST(ControlPlane, BothZeroRollsOneAtATimeAsTheControllerResolvesIt) {
  // Refusing both written as 0 is the flag's and the manifest's job; the engine resolves
  // maxUnavailable to 1 (ResolveFenceposts), so the rollout still completes.
  Options o = small(3, "0", "0");
  Random random(1);
  ControlPlane cp = simulate_control_plane(o, random);
  EXPECT_GT(cp.rollout_end, cp.rollout_start);
}

TEST(ControlPlane, PreStopDelaysTheSignal) {
  Options o = small(3, "1", "0");
  o.prestop = 7;
  o.grace = 30;
  Random random(4);
  ControlPlane cp = simulate_control_plane(o, random);
  for (const PodTimeline& p : cp.pods) {
    if (p.old) {
      EXPECT_NEAR(p.term - p.deletion, 7, 1e-9);  // the lab profile's kubelet acts at once
      EXPECT_EQ(p.exit, p.term);                  // naive exits at TERM
    }
  }
}

}  // namespace
}  // namespace zerodrop::sim
