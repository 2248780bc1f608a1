#include "sim/sweep.h"

#include <gtest/gtest.h>

#include "base/error.h"

namespace zerodrop::sim {
namespace {

TEST(Sweep, ParsesRangesAndSteps) {
  Sweep s = parse_sweep("prestop=0..30");
  EXPECT_EQ(s.parameter, SweepParameter::prestop);
  EXPECT_DOUBLE_EQ(s.to, 30);
  EXPECT_DOUBLE_EQ(s.step, 1);
  s = parse_sweep("grace=10s..60s,5s");
  EXPECT_EQ(s.parameter, SweepParameter::grace);
  EXPECT_DOUBLE_EQ(s.step, 5);
  EXPECT_EQ(parse_sweep("max-unavailable=0..3").parameter, SweepParameter::max_unavailable);
  EXPECT_THROW(parse_sweep("prestop=5..1"), Error);
  EXPECT_THROW(parse_sweep("replicas=1..3"), Error);
  EXPECT_THROW(parse_sweep("prestop"), Error);
  EXPECT_THROW(parse_sweep("prestop=0..30,0"), Error);
}

TEST(Sweep, ParsesBudgets) {
  Budget b = parse_budget("0 failures in 99%");
  EXPECT_EQ(b.max_failures, 0u);
  EXPECT_DOUBLE_EQ(b.fraction, 0.99);
  EXPECT_EQ(parse_budget("10 in 95%").max_failures, 10u);
  EXPECT_THROW(parse_budget("zero please"), Error);
  EXPECT_THROW(parse_budget("0 failures in 150%"), Error);
}

TEST(Sweep, RecommendsTheSmallestPreStopAbovePropagation) {
  Options o;
  o.profile = load_profile("lab");  // propagation uniform 1..3 s
  o.nodes = 3;
  o.replicas = 3;
  o.rate = 100;
  o.app = App::graceful;
  o.graceful_delay = 0;  // stops accepting at TERM: only preStop protects it
  o.keepalive = Keepalive::off;
  SweepResult r = run_sweep(o, parse_sweep("prestop=0..5"), parse_budget("0 failures in 99%"), 5);
  ASSERT_EQ(r.rows.size(), 6u);
  EXPECT_GT(r.rows[0].mean_failures, 10);
  ASSERT_TRUE(r.recommended.has_value());
  EXPECT_EQ(*r.recommended, 3);  // the propagation's upper bound
  for (size_t i = 1; i < r.rows.size(); ++i) {
    EXPECT_LE(r.rows[i].mean_failures, r.rows[i - 1].mean_failures + 1e-9);
  }
}

}  // namespace
}  // namespace zerodrop::sim
