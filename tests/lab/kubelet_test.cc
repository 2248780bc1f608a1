#include "lab/kubelet.h"

#include <gtest/gtest.h>

namespace zerodrop::lab {
namespace {

using namespace std::chrono_literals;

TEST(Kubelet, KillDelayWithoutPrestopIsTheGracePeriod) {
  EXPECT_EQ(kill_delay(30s, 0s), 30s);
  EXPECT_EQ(kill_delay(5s, 0s), 5s);
}

TEST(Kubelet, PrestopIsChargedInWholeSecondsTruncated) {
  EXPECT_EQ(whole_seconds(4900ms), 4s);
  EXPECT_EQ(kill_delay(30s, 4900ms), 26s);  // a 4.9 s hook is charged as 4 s
  EXPECT_EQ(kill_delay(30s, 10s), 20s);
}

TEST(Kubelet, NeverLessThanTwoSeconds) {
  EXPECT_EQ(kill_delay(3s, 1500ms), 2s);  // 3 - 1 = 2
  EXPECT_EQ(kill_delay(3s, 2500ms), 2s);  // 3 - 2 = 1, floored at 2
  EXPECT_EQ(kill_delay(0s, 0s), 2s);      // grace 0: TERM, KILL 2 s later
  EXPECT_EQ(kill_delay(1500ms, 700ms), 2s);
}

TEST(Kubelet, PrestopEqualToOrLongerThanGrace) {
  EXPECT_EQ(kill_delay(10s, 10s), 2s);  // equal: the whole grace is spent
  EXPECT_EQ(kill_delay(10s, 25s), 2s);  // longer: abandoned at grace, charged as grace
}

TEST(Kubelet, PrestopRunsOnlyWithAGracePeriod) {
  EXPECT_TRUE(runs_prestop(1s));
  EXPECT_FALSE(runs_prestop(0s));
}

}  // namespace
}  // namespace zerodrop::lab
