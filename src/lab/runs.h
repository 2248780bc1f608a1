#pragma once

#include <cstdint>
#include <iosfwd>
#include <string>
#include <vector>

#include "diagnose/diagnose.h"
#include "lab/demo.h"
#include "lab/lab.h"
#include "record/hole.h"

namespace zerodrop::lab {

// The runs one hole appeared in, out of a repeated rollout.
struct HoleRuns {
  record::Hole hole = record::Hole::unexplained;
  std::vector<size_t> runs;  // 1-based run numbers
  uint64_t fewest = 0;       // requests it took in the runs it appeared in
  uint64_t most = 0;
};

// What N runs of one scenario showed: the passes, each hole's runs, each run's coverage.
struct RunsSummary {
  size_t runs = 0;
  size_t passed = 0;
  std::vector<HoleRuns> holes;    // in most runs first
  std::vector<double> race_miss;  // per run: diagnose::Coverage::race_miss
};

// Gathers the diagnoses of runs 1..N (in order).
RunsSummary summarize_runs(const std::vector<diagnose::Diagnosis>& diagnoses);

// The summary for people: "deregistration-race in 4 of 5 runs (1, 2, 4, 5; 3–14 requests)".
std::string runs_text(const RunsSummary& summary);

// `zerodrop lab --runs N`: the rollout of `options` N times with seeds options.seed, +1, …, run i
// in `root`/run-i (finished by `finish`: diagnosis and report files; its terminal report is not
// printed), one line per run on `out`, then the summary, also written to `root`/runs.json.
// Returns 0 when every run passed, 1 when one failed, 130 when interrupted (what ran is
// summarized). Throws Error as lab::run does.
int run_repeated(Options options, int runs, const std::string& root, std::ostream& out,
                 const Finish& finish);

}  // namespace zerodrop::lab
