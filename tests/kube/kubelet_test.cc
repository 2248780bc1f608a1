#include "kube/kubelet.h"

#include <gtest/gtest.h>

namespace zerodrop::kube {
namespace {

using namespace std::chrono_literals;

// One row: grace, how long the preStop hook would run (0: none), and the kubelet's answer.
struct StopCase {
  const char* what;
  Duration grace, prestop;
  Duration term, kill;  // from the start of termination
  bool runs, cut;
};

const StopCase kStopCases[] = {
    {"no preStop: TERM at once, KILL after the grace", 30s, 0s, 0s, 30s, false, false},
    {"short grace without preStop", 5s, 0s, 0s, 5s, false, false},
    {"a 4.9 s hook is charged as 4 s", 30s, 4900ms, 4900ms, 4900ms + 26s, true, false},
    {"a 10 s hook leaves 20 s", 30s, 10s, 10s, 30s, true, false},
    {"3 - 1 = 2", 3s, 1500ms, 1500ms, 3500ms, true, false},
    {"3 - 2 = 1, floored at 2", 3s, 2500ms, 2500ms, 4500ms, true, false},
    {"grace 0: no hook, KILL 2 s after TERM", 0s, 5s, 0s, 2s, false, false},
    {"grace 0 without hook", 0s, 0s, 0s, 2s, false, false},
    {"sub-second grace", 1500ms, 700ms, 700ms, 2700ms, true, false},
    {"hook as long as the grace: the whole grace is spent", 10s, 10s, 10s, 12s, true, true},
    {"longer hook: cut at the grace, charged as the grace", 10s, 25s, 10s, 12s, true, true},
    {"nearly all the grace spent leaves the minimum", 10s, 9500ms, 9500ms, 11500ms, true, false},
};

TEST(Kubelet, StopTimesFollowKillContainer) {
  for (const StopCase& c : kStopCases) {
    StopTimes t = stop_times(c.grace, c.prestop);
    EXPECT_EQ(t.term, c.term) << c.what;
    EXPECT_EQ(t.kill, c.kill) << c.what;
    EXPECT_EQ(t.prestop_runs, c.runs) << c.what;
    EXPECT_EQ(t.prestop_cut, c.cut) << c.what;
    // The lab's form: SIGKILL follows the stop signal by kill_delay(grace, what the hook took).
    if (c.runs || c.prestop == 0s) {
      EXPECT_EQ(kill_delay(c.grace, t.term), t.kill - t.term) << c.what;
    }
  }
}

TEST(Kubelet, WholeSecondsTruncate) {
  EXPECT_EQ(whole_seconds(4900ms), 4s);
  EXPECT_EQ(whole_seconds(999ms), 0s);
  EXPECT_TRUE(runs_prestop(1s));
  EXPECT_FALSE(runs_prestop(0s));
}

TEST(Kubelet, StopTimesAreComputedAtCompileTime) {
  static_assert(stop_times(std::chrono::seconds(30), std::chrono::seconds(5)).kill
                == std::chrono::seconds(30));
  SUCCEED();
}

}  // namespace
}  // namespace zerodrop::kube
