#include "sim/sweep.h"

#include <string>
#include <tuple>

#include <gtest/gtest.h>

#include "base/error.h"
#include "record/hole.h"
#include "sim/sweep_plot.h"

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

// Two values: 40 and 10 failures per rollout over 2 runs (deregistration-race, then no-drain).
SweepResult two_rows() {
  SweepResult r;
  for (auto [value, race, drain] : {std::tuple{0.0, 60u, 20u}, std::tuple{5.0, 0u, 20u}}) {
    SweepRow row;
    row.value = value;
    row.failures_by_hole_total.assign(record::kHoleCount, 0);
    row.failures_by_hole_total[static_cast<size_t>(record::Hole::deregistration_race)] = race;
    row.failures_by_hole_total[static_cast<size_t>(record::Hole::no_drain)] = drain;
    row.mean_failures = (race + drain) / 2.0;
    r.rows.push_back(row);
  }
  r.recommended = 5;
  return r;
}

TEST(SweepPlot, TextBarsScaleToTheLargestMeanAndMarkTheRecommendation) {
  std::string plot = sweep_text_plot(two_rows(), SweepParameter::prestop, 2, 8);
  EXPECT_NE(plot.find("        0s |########| 40.0\n"), std::string::npos) << plot;
  EXPECT_NE(plot.find("        5s |##      | 10.0  <- recommended\n"), std::string::npos) << plot;
}

TEST(SweepPlot, SvgStacksEachValuesFailuresByHoleInTheReportsColours) {
  std::string svg = sweep_svg(two_rows(), SweepParameter::prestop, 2);
  EXPECT_EQ(svg.rfind("<svg ", 0), 0u);
  EXPECT_NE(svg.find("</svg>"), std::string::npos);
  auto count = [&](std::string_view what) {
    size_t n = 0;
    for (size_t at = svg.find(what); at != std::string::npos; at = svg.find(what, at + 1)) {
      ++n;
    }
    return n;
  };
  std::string race(record::info(record::Hole::deregistration_race).html_colour);
  std::string drain(record::info(record::Hole::no_drain).html_colour);
  // A bar segment per (value, hole) with failures, and one legend square per hole.
  EXPECT_EQ(count("fill=\"" + race + "\""), 2u);
  EXPECT_EQ(count("fill=\"" + drain + "\""), 3u);
  EXPECT_EQ(count(">recommended<"), 1u);
  EXPECT_NE(svg.find("deregistration-race: 30.0 per rollout"), std::string::npos);
}

}  // namespace
}  // namespace zerodrop::sim
