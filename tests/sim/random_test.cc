#include "sim/random.h"

#include <gtest/gtest.h>

#include "sim/event_queue.h"

namespace zerodrop::sim {
namespace {

TEST(Random, SameSeedSameStream) {
  Random a(42), b(42), c(43);
  bool differs = false;
  for (int i = 0; i < 100; ++i) {
    double x = a.uniform();
    EXPECT_EQ(x, b.uniform());
    differs |= x != c.uniform();
  }
  EXPECT_TRUE(differs);
}

TEST(Random, PoissonMeanAndVarianceOnBothBranches) {
  Random random(5);
  for (double mean : {0.3, 7.0, 250.0}) {
    double sum = 0, sq = 0;
    const int n = 20000;
    for (int i = 0; i < n; ++i) {
      double x = static_cast<double>(random.poisson(mean));
      sum += x;
      sq += x * x;
    }
    double m = sum / n, var = sq / n - m * m;
    EXPECT_NEAR(m, mean, 0.03 * mean + 0.02) << mean;
    EXPECT_NEAR(var, mean, 0.08 * mean + 0.05) << mean;
  }
  EXPECT_EQ(random.poisson(0), 0u);
}

TEST(EventQueue, RunsInTimeOrderThenSchedulingOrder) {
  EventQueue queue;
  std::vector<int> order;
  queue.at(2, [&] { order.push_back(3); });
  queue.at(1, [&] {
    order.push_back(1);
    queue.at(1, [&] { order.push_back(2); });  // same time: after the ones already queued
  });
  queue.at(1, [&] { order.push_back(11); });
  EXPECT_EQ(queue.run(), 4u);
  EXPECT_EQ(order, (std::vector<int>{1, 11, 2, 3}));
  EXPECT_EQ(queue.now(), 2);
}

TEST(TokenBucket, BurstThenOnePerPeriod) {
  TokenBucket bucket(1.0, 2);  // kube-proxy's runner: burst 2, then one per second
  EXPECT_DOUBLE_EQ(bucket.acquire(10), 10);
  EXPECT_DOUBLE_EQ(bucket.acquire(10), 10);
  EXPECT_DOUBLE_EQ(bucket.acquire(10), 11);
  EXPECT_DOUBLE_EQ(bucket.acquire(10.5), 12);
  EXPECT_DOUBLE_EQ(bucket.acquire(20), 20);  // refilled
}

}  // namespace
}  // namespace zerodrop::sim
