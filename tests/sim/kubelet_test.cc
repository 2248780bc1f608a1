#include "sim/kubelet.h"

#include <gtest/gtest.h>

namespace zerodrop::sim {
namespace {

TEST(StopTimes, NoPreStopTermAtOnceKillAfterGrace) {
  StopTimes t = stop_times(30, 0);
  EXPECT_FALSE(t.prestop_run);
  EXPECT_DOUBLE_EQ(t.term, 0);
  EXPECT_DOUBLE_EQ(t.kill, 30);
}

TEST(StopTimes, PreStopCountsAgainstGraceInWholeSeconds) {
  // A 4.9 s hook is charged as 4 s: KILL 26 s after TERM.
  StopTimes t = stop_times(30, 4.9);
  EXPECT_TRUE(t.prestop_run);
  EXPECT_DOUBLE_EQ(t.term, 4.9);
  EXPECT_DOUBLE_EQ(t.kill, 4.9 + 26);
}

TEST(StopTimes, PreStopEqualToGraceGetsTheTwoSecondFloor) {
  StopTimes t = stop_times(10, 10);
  EXPECT_TRUE(t.prestop_cut);
  EXPECT_DOUBLE_EQ(t.term, 10);
  EXPECT_DOUBLE_EQ(t.kill, 12);
}

TEST(StopTimes, PreStopLongerThanGraceIsCutAtGrace) {
  StopTimes t = stop_times(10, 25);
  EXPECT_TRUE(t.prestop_cut);
  EXPECT_DOUBLE_EQ(t.term, 10);
  EXPECT_DOUBLE_EQ(t.kill, 12);
}

TEST(StopTimes, NearlyAllGraceSpentLeavesTheMinimum) {
  StopTimes t = stop_times(10, 9.5);  // charged 9 s: 1 s left, raised to 2 s
  EXPECT_DOUBLE_EQ(t.term, 9.5);
  EXPECT_DOUBLE_EQ(t.kill, 11.5);
}

TEST(StopTimes, ZeroGraceSkipsPreStop) {
  StopTimes t = stop_times(0, 5);
  EXPECT_FALSE(t.prestop_run);
  EXPECT_DOUBLE_EQ(t.term, 0);
  EXPECT_DOUBLE_EQ(t.kill, 2);
}

}  // namespace
}  // namespace zerodrop::sim
