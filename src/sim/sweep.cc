#include "sim/sweep.h"

#include <algorithm>
#include <cmath>

#include <fmt/format.h>

#include "base/duration.h"
#include "base/enum_names.h"
#include "base/error.h"
#include "base/parse.h"
#include "base/text.h"
#include "sim/simulator.h"

namespace zerodrop::sim {
namespace {

double sweep_value(std::string_view text, SweepParameter p) {
  if (p == SweepParameter::max_unavailable) {
    return static_cast<double>(parse_integer(trim(text), "--sweep", 0, 100'000));
  }
  return to_seconds(parse_duration(trim(text), "--sweep"));
}

}  // namespace

std::string_view to_string(SweepParameter parameter) {
  return kSweepParameterNames[static_cast<size_t>(parameter)];
}

Sweep parse_sweep(std::string_view text) {
  auto eq = text.find('=');
  auto dots = text.find("..");
  if (eq == std::string_view::npos || dots == std::string_view::npos || dots < eq) {
    throw Error(fmt::format("--sweep: expected NAME=FROM..TO[,STEP], got '{}'", text));
  }
  Sweep sweep;
  std::string_view name = trim(text.substr(0, eq));
  auto parameter = enum_from_name<SweepParameter>(
      kSweepParameterNames, name == "maxUnavailable" ? "max-unavailable" : name);
  if (parameter) {
    sweep.parameter = *parameter;
  } else {
    throw Error(
        fmt::format("--sweep: unknown parameter '{}' (prestop, grace, max-unavailable)", name));
  }
  std::string_view rest = text.substr(dots + 2);
  auto comma = rest.find(',');
  sweep.from = sweep_value(text.substr(eq + 1, dots - eq - 1), sweep.parameter);
  sweep.to = sweep_value(rest.substr(0, comma), sweep.parameter);
  if (comma != std::string_view::npos) {
    sweep.step = sweep_value(rest.substr(comma + 1), sweep.parameter);
  }
  if (sweep.to < sweep.from || sweep.step <= 0 || (sweep.to - sweep.from) / sweep.step > 1000) {
    throw Error(
        fmt::format("--sweep: '{}' needs FROM <= TO, STEP > 0 and at most 1000 steps", text));
  }
  return sweep;
}

Budget parse_budget(std::string_view text) {
  // "<N> failures in <P>%" (the word "failures" is optional).
  auto parts = split(trim(text), ' ');
  std::vector<std::string_view> words;
  for (auto p : parts) {
    if (!trim(p).empty()) {
      words.push_back(trim(p));
    }
  }
  if (words.size() == 4 && (words[1] == "failures" || words[1] == "failure")) {
    words.erase(words.begin() + 1);
  }
  if (words.size() != 3 || words[1] != "in" || !words[2].ends_with('%')) {
    throw Error(fmt::format("--budget: expected 'N failures in P%', got '{}'", text));
  }
  Budget budget;
  budget.max_failures =
      static_cast<uint64_t>(parse_integer(words[0], "--budget", 0, 1'000'000'000));
  double percent = parse_number(words[2].substr(0, words[2].size() - 1), "--budget");
  if (percent <= 0 || percent > 100) {
    throw Error(fmt::format("--budget: the percentage must be in (0, 100], got '{}'", words[2]));
  }
  budget.fraction = percent / 100;
  return budget;
}

void apply(Options& options, SweepParameter parameter, double value) {
  switch (parameter) {
    case SweepParameter::prestop:
      options.prestop = value;
      break;
    case SweepParameter::grace:
      options.grace = value;
      break;
    case SweepParameter::max_unavailable:
      options.max_unavailable = IntOrPercent::count(static_cast<int64_t>(value));
      break;
  }
}

SweepResult run_sweep(Options options, const Sweep& sweep, const Budget& budget, int runs) {
  options.record_events = false;
  SweepResult result;
  uint64_t first_seed = options.seed;
  int steps = static_cast<int>(std::floor((sweep.to - sweep.from) / sweep.step + 1e-9));
  for (int i = 0; i <= steps; ++i) {
    SweepRow row;
    row.value = sweep.from + i * sweep.step;
    row.failures_by_hole_total.assign(record::kHoleCount, 0);
    apply(options, sweep.parameter, row.value);
    std::vector<uint64_t> totals;
    for (int run = 0; run < runs; ++run) {
      options.seed = first_seed + static_cast<uint64_t>(run);
      Result r = simulate(options);
      totals.push_back(r.failed);
      for (size_t h = 0; h < record::kHoleCount; ++h) {
        row.failures_by_hole_total[h] += r.failures[h];
      }
    }
    std::sort(totals.begin(), totals.end());
    double sum = 0;
    uint64_t within = 0;
    for (uint64_t t : totals) {
      sum += static_cast<double>(t);
      within += t <= budget.max_failures ? 1 : 0;
    }
    row.mean_failures = sum / runs;
    row.max_failures = totals.back();
    size_t rank = static_cast<size_t>(std::ceil(budget.fraction * runs));
    row.quantile_failures = totals[std::clamp<size_t>(rank, 1, totals.size()) - 1];
    row.within_budget = static_cast<double>(within) / runs;
    row.meets = row.within_budget + 1e-12 >= budget.fraction;
    if (row.meets && !result.recommended) {
      result.recommended = row.value;
    }
    result.rows.push_back(std::move(row));
  }
  return result;
}

}  // namespace zerodrop::sim
