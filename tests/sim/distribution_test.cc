#include "sim/distribution.h"

#include <cmath>

#include <gtest/gtest.h>

#include "base/error.h"

namespace zerodrop::sim {
namespace {

TEST(Distribution, ParsesTheLabsThreeForms) {
  Distribution fixed = parse_distribution("2s", "--x");
  EXPECT_EQ(fixed.kind, Distribution::Kind::fixed);
  EXPECT_DOUBLE_EQ(fixed.mean(), 2);
  Distribution uniform = parse_distribution("1s..3s", "--x");
  EXPECT_EQ(uniform.kind, Distribution::Kind::uniform);
  EXPECT_DOUBLE_EQ(uniform.mean(), 2);
  Distribution logn = parse_distribution("p50=1s,p99=6s", "--x");
  EXPECT_EQ(logn.kind, Distribution::Kind::lognormal);
  EXPECT_NEAR(logn.median(), 1, 1e-9);
  EXPECT_EQ(logn.to_string(), "p50=1s,p99=6s");
}

TEST(Distribution, RejectsBadTextNamingTheFlag) {
  EXPECT_THROW(parse_distribution("3s..1s", "--propagation"), Error);
  EXPECT_THROW(parse_distribution("p50=2s", "--propagation"), Error);
  EXPECT_THROW(parse_distribution("p50=5s,p99=1s", "--propagation"), Error);
  try {
    parse_distribution("soon", "--propagation");
    FAIL();
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("--propagation"), std::string::npos);
  }
}

TEST(Distribution, SampleQuantilesMatchTheParameters) {
  Distribution d = Distribution::quantiles(1, 6);
  Random random(7);
  std::vector<double> xs;
  for (int i = 0; i < 20000; ++i) {
    xs.push_back(d.sample(random));
  }
  std::sort(xs.begin(), xs.end());
  EXPECT_NEAR(xs[10000], 1, 0.05);
  EXPECT_NEAR(xs[19800], 6, 0.6);
}

TEST(Distribution, ExcessIsThePartOutlastingG) {
  EXPECT_DOUBLE_EQ(Distribution::fixed(3).excess(1), 2);
  EXPECT_DOUBLE_EQ(Distribution::fixed(3).excess(5), 0);
  EXPECT_DOUBLE_EQ(Distribution::uniform(0, 2).excess(1), 0.25);
  Distribution d = Distribution::quantiles(0.1, 1);
  EXPECT_NEAR(d.excess(0), d.mean(), 1e-12);
  // Monte Carlo check of the closed form.
  Random random(3);
  double sum = 0;
  for (int i = 0; i < 200000; ++i) {
    sum += std::max(d.sample(random) - 0.2, 0.0);
  }
  EXPECT_NEAR(d.excess(0.2), sum / 200000, 0.002);
}

}  // namespace
}  // namespace zerodrop::sim
