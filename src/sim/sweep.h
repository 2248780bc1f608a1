#pragma once

#include <array>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "sim/options.h"

namespace zerodrop::sim {

// What may be swept: preStop seconds, grace seconds, maxUnavailable (a count).
enum class SweepParameter { prestop, grace, max_unavailable };
inline constexpr std::array<std::string_view, 3> kSweepParameterNames = {"prestop", "grace",
                                                                         "max-unavailable"};

struct Sweep {
  SweepParameter parameter = SweepParameter::prestop;
  double from = 0, to = 30, step = 1;
};

// "prestop=0..30", "grace=10..60,5", "max-unavailable=0..3". Throws Error naming --sweep.
Sweep parse_sweep(std::string_view text);
std::string_view to_string(SweepParameter parameter);

// "at most N failures in P% of rollouts": "0 failures in 99%". Throws Error naming --budget.
struct Budget {
  uint64_t max_failures = 0;
  double fraction = 0.99;
};

Budget parse_budget(std::string_view text);

// One swept value over `runs` seeds.
struct SweepRow {
  double value = 0;
  double mean_failures = 0;
  uint64_t max_failures = 0;
  uint64_t quantile_failures = 0;  // at the budget's fraction
  double within_budget = 0;        // fraction of runs with at most the budget's failures
  bool meets = false;
  std::vector<uint64_t> failures_by_hole_total;  // summed over runs
};

struct SweepResult {
  std::vector<SweepRow> rows;
  std::optional<double> recommended;  // the smallest value that meets the budget
};

// Runs the options once per value and seed (seeds options.seed .. options.seed + runs - 1).
SweepResult run_sweep(Options options, const Sweep& sweep, const Budget& budget, int runs);

// Applies a swept value to the options.
void apply(Options& options, SweepParameter parameter, double value);

}  // namespace zerodrop::sim
