// `lab --runs N`: per hole, the runs it appeared in.
#include "lab/runs.h"

#include <gtest/gtest.h>

namespace zerodrop::lab {
namespace {

using record::Hole;

diagnose::Diagnosis run_with(std::vector<std::pair<Hole, uint64_t>> holes) {
  diagnose::Diagnosis d;
  for (const auto& [hole, requests] : holes) {
    d.holes.push_back({.hole = hole, .requests = requests});
    d.totals.failed += requests;
  }
  d.verdict = holes.empty() ? diagnose::Verdict::pass : diagnose::Verdict::fail;
  return d;
}

TEST(Runs, CountsPerHoleTheRunsItAppearedIn) {
  std::vector<diagnose::Diagnosis> runs = {
      run_with({{Hole::deregistration_race, 12}, {Hole::no_drain, 1}}),
      run_with({}),
      run_with({{Hole::deregistration_race, 3}}),
      run_with({{Hole::keepalive_stale, 1}, {Hole::deregistration_race, 7}}),
  };
  runs[1].coverage.race_miss = 0.9;
  RunsSummary s = summarize_runs(runs);
  EXPECT_EQ(s.runs, 4u);
  EXPECT_EQ(s.passed, 1u);
  ASSERT_EQ(s.holes.size(), 3u);
  EXPECT_EQ(s.holes[0].hole, Hole::deregistration_race);
  EXPECT_EQ(s.holes[0].runs, (std::vector<size_t>{1, 3, 4}));
  EXPECT_EQ(s.holes[0].fewest, 3u);
  EXPECT_EQ(s.holes[0].most, 12u);
  EXPECT_EQ(s.holes[1].hole, Hole::no_drain);
  EXPECT_EQ(s.holes[1].runs, (std::vector<size_t>{1}));
  EXPECT_EQ(s.holes[2].hole, Hole::keepalive_stale);
  EXPECT_EQ(s.race_miss[1], 0.9);
  EXPECT_EQ(runs_text(s),
            "1 of 4 runs passed\n"
            "  deregistration-race in 3 of 4 runs (runs 1, 3, 4; 3–12 requests each)\n"
            "  no-drain in 1 of 4 runs (run 1; 1 request each)\n"
            "  keepalive-stale in 1 of 4 runs (run 4; 1 request each)\n");
}

}  // namespace
}  // namespace zerodrop::lab
