// liveness-kills-drain (docs/sim.md, "Liveness probes at shutdown"): a kubelet that keeps probing
// liveness while the pod drains kills it once its probe has failed failureThreshold times.
#include <gtest/gtest.h>

#include "kube/kubelet.h"
#include "one_node.h"
#include "sim/simulator.h"

namespace zerodrop::sim {
namespace {

using record::Hole;

double expected_failures(const Result& r, Hole h) {
  return r.expected[static_cast<size_t>(h)];
}

// One router that learns of every change 2 s after it, 1 replica replaced surge-first: at the old
// pod's TERM the router still knows only it (n = 1). The app closes its listener at TERM (the
// probe fails from then) and drains 30 s of 10 s requests; grace 60 s. Probe: every 1 s, 3
// failures, timeout 1 s: the kill comes 3 s after the first failed probe, which is at most one
// period after TERM, so 3 to 4 s into the drain, when each of the 10 req/s x 10 s in flight has
// 6 to 7 s left: 60 to 70 requests cut.
Options draining() {
  Options o = one_node(2, 1, 10, 1, 0);
  o.readiness_period = 1;
  o.app = App::close_listener;
  o.keepalive = Keepalive::off;
  o.grace = 60;
  o.request_duration = Distribution::fixed(10);
  o.drain = Distribution::fixed(30);
  o.liveness = LivenessProbe{1, 3, 1};
  return o;
}

TEST(Liveness, KillWindowIsFailuresApartPlusTheLastTimeout) {
  using std::chrono::seconds;
  EXPECT_EQ(kube::liveness_kill_window(seconds(10), 3, seconds(1)), seconds(21));
  EXPECT_EQ(kube::liveness_kill_window(seconds(5), 1, seconds(2)), seconds(2));
}

TEST(Liveness, AProbeKeptDuringShutdownKillsTheDrain) {
  Options o = draining();
  o.liveness_at_shutdown = LivenessAtShutdown::probes;
  Result r = simulate(o);
  double cut = expected_failures(r, Hole::liveness_kills_drain);
  EXPECT_GT(cut, 60.0 - 1e-9);
  EXPECT_LE(cut, 70.0 + 1e-9);
  EXPECT_LT(expected_failures(r, Hole::grace_overrun), 1e-9);  // the grace period never ran out
  bool noted = false;
  for (const record::Event& e : r.record.events) {
    noted = noted || e.kind == record::EventKind::liveness_restart;
  }
  EXPECT_TRUE(noted);  // the diagnosis reads it (liveness_rule)
}

TEST(Liveness, TodaysKubeletStopsProbingAtDeletion) {
  Options o = draining();  // LivenessAtShutdown::stops
  Result r = simulate(o);
  EXPECT_LT(expected_failures(r, Hole::liveness_kills_drain), 1e-9);
  o.liveness_at_shutdown = LivenessAtShutdown::probes;
  o.drain = Distribution::fixed(2);  // done before the third failure
  o.request_duration = Distribution::fixed(1);
  EXPECT_LT(expected_failures(simulate(o), Hole::liveness_kills_drain), 1e-9);
}

}  // namespace
}  // namespace zerodrop::sim
