#include "lab/rollout.h"

#include <gtest/gtest.h>

namespace zerodrop::lab {
namespace {

std::vector<PodView> old_pods(int n) {
  std::vector<PodView> pods;
  for (int i = 0; i < n; ++i) {
    pods.push_back({"old-" + std::to_string(i), 1, false, true});
  }
  return pods;
}

TEST(Rollout, SurgesFirstWhenNothingMayBeUnavailable) {
  std::vector<PodView> pods = old_pods(3);
  RolloutPlan plan = plan_rollout(pods, 2, {3, 1, 0});
  EXPECT_EQ(plan.create, 1);
  EXPECT_TRUE(plan.remove.empty());  // the new pod is not available yet
  pods.push_back({"new-0", 2, false, false});
  EXPECT_TRUE(plan_rollout(pods, 2, {3, 1, 0}).empty());
  pods.back().available = true;
  plan = plan_rollout(pods, 2, {3, 1, 0});
  EXPECT_EQ(plan.create, 0);
  ASSERT_EQ(plan.remove.size(), 1u);
}

TEST(Rollout, TerminatingPodsCountForNothing) {
  std::vector<PodView> pods = old_pods(3);
  pods[0].terminating = true;
  pods.push_back({"new-0", 2, false, true});
  RolloutPlan plan = plan_rollout(pods, 2, {3, 1, 0});
  EXPECT_EQ(plan.create, 1);  // 3 live pods < 3 + 1
  EXPECT_EQ(plan.remove.size(), 0u);  // 3 available = min available; the new one is unavailable
}

TEST(Rollout, MaxUnavailableDeletesWithoutWaiting) {
  std::vector<PodView> pods = old_pods(4);
  RolloutPlan plan = plan_rollout(pods, 2, {4, 0, 1});
  EXPECT_EQ(plan.create, 0);
  EXPECT_EQ(plan.remove.size(), 1u);
}

TEST(Rollout, UnhealthyOldPodsGoFirst) {
  std::vector<PodView> pods = old_pods(3);
  pods[2].available = false;
  RolloutPlan plan = plan_rollout(pods, 2, {3, 0, 1});
  ASSERT_EQ(plan.remove.size(), 1u);
  EXPECT_EQ(plan.remove[0], "old-2");
}

TEST(Rollout, ReplacesADeletedPod) {
  std::vector<PodView> pods = old_pods(3);
  pods[1].terminating = true;
  RolloutPlan plan = plan_rollout(pods, 1, {3, 1, 0});
  EXPECT_EQ(plan.create, 1);
  EXPECT_TRUE(plan.remove.empty());
}

TEST(Rollout, CompleteWhenEveryLivePodIsNewAndAvailable) {
  std::vector<PodView> pods = {{"a", 2, false, true}, {"b", 2, false, true}, {"c", 1, true, false}};
  EXPECT_TRUE(rollout_complete(pods, 2, 2));
  pods[1].available = false;
  EXPECT_FALSE(rollout_complete(pods, 2, 2));
  EXPECT_FALSE(rollout_complete(old_pods(2), 2, 2));
}

}  // namespace
}  // namespace zerodrop::lab
