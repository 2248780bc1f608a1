#include "base/latency_histogram.h"

#include <algorithm>
#include <random>
#include <vector>

#include <gtest/gtest.h>

namespace zerodrop {
namespace {

using std::chrono::nanoseconds;

TEST(LatencyHistogram, EmptyIsZero) {
  LatencyHistogram h;
  EXPECT_EQ(h.quantile(0.5).count(), 0);
  EXPECT_EQ(h.max().count(), 0);
}

TEST(LatencyHistogram, QuantilesWithinHalfAPercent) {
  std::mt19937_64 random(1);
  std::lognormal_distribution<double> dist(13.0, 1.5);  // around 0.4 ms, long tail
  std::vector<int64_t> values;
  LatencyHistogram h;
  for (int i = 0; i < 100000; ++i) {
    auto v = static_cast<int64_t>(dist(random));
    values.push_back(v);
    h.add(nanoseconds(v));
  }
  std::sort(values.begin(), values.end());
  for (double q : {0.5, 0.9, 0.99, 0.999}) {
    double exact = static_cast<double>(values[static_cast<size_t>(q * values.size()) - 1]);
    EXPECT_NEAR(static_cast<double>(h.quantile(q).count()), exact, exact * 0.005) << q;
  }
  EXPECT_EQ(h.max().count(), values.back());
  EXPECT_EQ(h.count(), values.size());
}

TEST(LatencyHistogram, MergesAndClampsHugeValues) {
  LatencyHistogram a;
  LatencyHistogram b;
  a.add(nanoseconds(50));
  b.add(std::chrono::hours(5));
  a.merge(b);
  EXPECT_EQ(a.count(), 2u);
  EXPECT_EQ(a.quantile(0.5).count(), 50);
  EXPECT_EQ(a.max(), std::chrono::hours(5));
  EXPECT_LE(a.quantile(1.0), a.max());
}

}  // namespace
}  // namespace zerodrop
