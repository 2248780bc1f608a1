#include "load/disruption_tracker.h"

#include <gtest/gtest.h>

namespace zerodrop::load {
namespace {

using namespace std::chrono_literals;

TEST(DisruptionTracker, LongestStretchOfFailuresByIntendedTime) {
  DisruptionTracker t(10s);
  for (int ms = 0; ms < 1000; ms += 10) {
    bool failed = (ms >= 200 && ms < 500) || (ms >= 700 && ms < 750);
    t.add(std::chrono::milliseconds(ms), failed);
  }
  EXPECT_NEAR(t.longest_s(), 0.291, 0.0005);  // failures intended at 200..490 ms
  DisruptionTracker::Failures f = t.failures();
  EXPECT_NEAR(f.longest_start_s, 0.200, 0.0005);
  EXPECT_NEAR(f.first_s, 0.200, 0.0005);
  EXPECT_NEAR(f.last_s, 0.741, 0.0005);  // the end of the slot of the failure at 740 ms
}

TEST(DisruptionTracker, OrderOfCompletionDoesNotMatter) {
  DisruptionTracker t(1s);
  t.add(300ms, true);
  t.add(100ms, true);
  t.add(200ms, true);
  t.add(400ms, false);
  t.add(0ms, false);
  EXPECT_NEAR(t.longest_s(), 0.201, 0.0005);
}

TEST(DisruptionTracker, NoFailureNoDisruptionAndLongRunsStayBounded) {
  DisruptionTracker t(24h);
  t.add(1h, false);
  EXPECT_EQ(t.longest_s(), 0);
  EXPECT_EQ(t.failures().last_s, 0);
  EXPECT_GE(t.slot_width(), 24h / 1'000'000);
  t.add(48h, true);  // past the end: lands in the last slot
  EXPECT_GT(t.longest_s(), 0);
}

}  // namespace
}  // namespace zerodrop::load
