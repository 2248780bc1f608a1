#pragma once

#include <functional>
#include <iosfwd>
#include <optional>
#include <string>

#include "record/run_folder.h"
#include "sim/options.h"
#include "sim/sweep.h"

namespace zerodrop::sim {

// How a simulated run ends, given its record and its folder (when --out asked for one): the cli
// passes report::finish_run (diagnosis, terminal report, report files, run.json), so the
// simulator need not know the renderers.
using Finish = std::function<void(const std::optional<record::RunFolder>&, const record::RunRecord&,
                                  std::ostream&)>;

// What `zerodrop sim` was asked to do.
struct Invocation {
  Options options;
  int runs = 1;                  // seeds options.seed .. seed + runs - 1
  std::optional<Sweep> sweep;    // a table of failures against a swept value
  std::optional<Budget> budget;  // "0 failures in 99%": the pass mark
  std::string out_dir;           // when set: events, buckets, run.json, report.json/html
  Finish finish;                 // required
};

// Runs the invocation, prints to `out` and returns the exit code: 0 when the budget is met (or,
// without one, when no request failed; for a sweep, when some value meets the budget), 1
// otherwise. Throws Error on bad options or an unwritable output folder.
int run(const Invocation& invocation, std::ostream& out);

}  // namespace zerodrop::sim
