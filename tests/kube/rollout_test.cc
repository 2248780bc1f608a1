#include "kube/rollout.h"

#include <gtest/gtest.h>

namespace zerodrop::kube {
namespace {

using namespace std::chrono_literals;

struct LimitsCase {
  const char* surge;
  const char* unavailable;
  int replicas;
  int want_surge, want_unavailable;
};

// maxSurge rounds up, maxUnavailable down; both 0 after rounding: unavailable 1.
const LimitsCase kLimitsCases[] = {
    {"25%", "25%", 4, 1, 1}, {"25%", "25%", 3, 1, 0}, {"25%", "25%", 10, 3, 2},
    {"1", "0", 3, 1, 0},     {"0", "1", 3, 0, 1},     {"0", "25%", 3, 0, 1},
    {"0%", "0%", 3, 0, 1},   {"100%", "0", 3, 3, 0},  {"200%", "0", 2, 4, 0},
    {"2", "50%", 5, 2, 2},   {"0", "10%", 1, 0, 1},
};

TEST(RolloutLimits, ResolveLikeTheDeploymentController) {
  for (const LimitsCase& c : kLimitsCases) {
    IntOrPercent surge = std::string_view(c.surge).ends_with('%')
                             ? IntOrPercent::percent(std::stoi(c.surge))
                             : IntOrPercent::count(std::stoi(c.surge));
    IntOrPercent unavailable = IntOrPercent::parse(c.unavailable, "maxUnavailable");
    RolloutLimits l = resolve_limits(surge, unavailable, c.replicas);
    EXPECT_EQ(l.replicas, c.replicas);
    EXPECT_EQ(l.max_surge, c.want_surge) << c.surge << " of " << c.replicas;
    EXPECT_EQ(l.max_unavailable, c.want_unavailable) << c.unavailable << " of " << c.replicas;
  }
}

TEST(RolloutLimits, OnlyBothWrittenAsZeroIsInvalid) {
  EXPECT_TRUE(invalid_limits(IntOrPercent::count(0), IntOrPercent::count(0)));
  EXPECT_TRUE(invalid_limits(IntOrPercent::percent(0), IntOrPercent::count(0)));
  EXPECT_FALSE(invalid_limits(IntOrPercent::count(0), IntOrPercent::percent(25)));
  EXPECT_FALSE(invalid_limits(IntOrPercent::count(1), IntOrPercent::count(0)));
}

TEST(RolloutLimits, AvailableNeedsMinReadySecondsOfReady) {
  EXPECT_TRUE(available(true, false, 0s, 0s));
  EXPECT_FALSE(available(true, false, 4s, 5s));
  EXPECT_TRUE(available(true, false, 5s, 5s));
  EXPECT_FALSE(available(true, true, 9s, 5s));
  EXPECT_FALSE(available(false, false, std::nullopt, 0s));
}

std::vector<PodView> old_pods(int n) {
  std::vector<PodView> pods;
  for (int i = 0; i < n; ++i) {
    pods.push_back({static_cast<size_t>(i), 1, false, true});
  }
  return pods;
}

TEST(RolloutPlan, SurgesFirstWhenNothingMayBeUnavailable) {
  std::vector<PodView> pods = old_pods(3);
  RolloutPlan plan = plan_rollout(pods, 2, {3, 1, 0});
  EXPECT_EQ(plan.create, 1);
  EXPECT_TRUE(plan.remove.empty());  // the new pod is not available yet
  pods.push_back({10, 2, false, false});
  EXPECT_TRUE(plan_rollout(pods, 2, {3, 1, 0}).empty());
  pods.back().available = true;
  plan = plan_rollout(pods, 2, {3, 1, 0});
  EXPECT_EQ(plan.create, 0);
  ASSERT_EQ(plan.remove.size(), 1u);
  EXPECT_EQ(plan.remove[0], 0u);  // then the oldest first
}

TEST(RolloutPlan, TerminatingPodsCountForNothing) {
  std::vector<PodView> pods = old_pods(3);
  pods[0].terminating = true;
  pods.push_back({10, 2, false, true});
  RolloutPlan plan = plan_rollout(pods, 2, {3, 1, 0});
  EXPECT_EQ(plan.create, 1);          // 3 live pods < 3 + 1
  EXPECT_EQ(plan.remove.size(), 0u);  // 3 available = min available; the new one is unavailable
}

TEST(RolloutPlan, MaxUnavailableDeletesWithoutWaiting) {
  RolloutPlan plan = plan_rollout(old_pods(4), 2, {4, 0, 1});
  EXPECT_EQ(plan.create, 0);
  EXPECT_EQ(plan.remove.size(), 1u);
}

TEST(RolloutPlan, UnhealthyOldPodsGoFirst) {
  std::vector<PodView> pods = old_pods(3);
  pods[2].available = false;
  RolloutPlan plan = plan_rollout(pods, 2, {3, 0, 1});
  ASSERT_EQ(plan.remove.size(), 1u);
  EXPECT_EQ(plan.remove[0], 2u);
}

TEST(RolloutPlan, NewPodsNotYetAvailableHoldTheScaleDown) {
  // minReadySeconds: a Ready new pod that is not yet available does not let an old one go.
  std::vector<PodView> pods = old_pods(2);
  pods.push_back({10, 2, false, false});
  EXPECT_TRUE(plan_rollout(pods, 2, {2, 1, 0}).remove.empty());
  pods.back().available = true;
  EXPECT_EQ(plan_rollout(pods, 2, {2, 1, 0}).remove.size(), 1u);
}

TEST(RolloutPlan, ReplacesADeletedPod) {
  std::vector<PodView> pods = old_pods(3);
  pods[1].terminating = true;
  RolloutPlan plan = plan_rollout(pods, 1, {3, 1, 0});
  EXPECT_EQ(plan.create, 1);
  EXPECT_TRUE(plan.remove.empty());
}

TEST(RolloutPlan, CompleteWhenEveryLivePodIsNewAndAvailable) {
  std::vector<PodView> pods = {{0, 2, false, true}, {1, 2, false, true}, {2, 1, true, false}};
  EXPECT_TRUE(rollout_complete(pods, 2, 2));
  pods[1].available = false;
  EXPECT_FALSE(rollout_complete(pods, 2, 2));
  EXPECT_FALSE(rollout_complete(old_pods(2), 2, 2));
}

}  // namespace
}  // namespace zerodrop::kube
