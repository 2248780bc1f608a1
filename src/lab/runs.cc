#include "lab/runs.h"

#include <algorithm>
#include <fstream>
#include <sstream>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "base/error.h"
#include "base/exit_code.h"

namespace zerodrop::lab {
namespace {

std::string holes_of(const diagnose::Diagnosis& d) {
  std::string out;
  for (const diagnose::HoleSummary& h : d.holes) {
    out += fmt::format("{}{} {}", out.empty() ? "" : ", ", record::to_string(h.hole), h.requests);
  }
  return out;
}

// "run 2/5 (seed 2): FAIL 14 of 1,520 failed: deregistration-race 13, no-drain 1 — DIR".
std::string run_line(size_t i, int runs, uint64_t seed, const diagnose::Diagnosis& d,
                     const std::string& dir) {
  bool pass = d.verdict == diagnose::Verdict::pass;
  std::string what = pass ? fmt::format("PASS {} requests", d.totals.requests)
                          : fmt::format("FAIL {} of {} failed: {}", d.totals.failed,
                                        d.totals.requests, holes_of(d));
  const diagnose::Coverage& c = d.coverage;
  std::string race = c.race_windows == record::Micros{0}
                         ? "no router sent a stopping pod new connections"
                         : fmt::format("{} new connection{} in the race windows (P(none) = {:.2g})",
                                       c.race_fresh, c.race_fresh == 1 ? "" : "s", c.race_miss);
  return fmt::format("run {}/{} (seed {}): {}; {} — {}\n", i, runs, seed, what, race, dir);
}

void write_runs_json(const std::string& path, const RunsSummary& s,
                     const std::vector<diagnose::Diagnosis>& diagnoses, uint64_t first_seed) {
  nlohmann::ordered_json runs = nlohmann::ordered_json::array();
  for (size_t i = 0; i < diagnoses.size(); ++i) {
    const diagnose::Diagnosis& d = diagnoses[i];
    nlohmann::ordered_json holes = nlohmann::ordered_json::object();
    for (const diagnose::HoleSummary& h : d.holes) {
      holes[std::string(record::to_string(h.hole))] = h.requests;
    }
    runs.push_back({{"run", i + 1},
                    {"seed", first_seed + i},
                    {"folder", fmt::format("run-{}", i + 1)},
                    {"verdict", d.verdict == diagnose::Verdict::pass ? "pass" : "fail"},
                    {"requests", d.totals.requests},
                    {"failed", d.totals.failed},
                    {"holes", holes},
                    {"race_miss", d.coverage.race_miss}});
  }
  nlohmann::ordered_json holes = nlohmann::ordered_json::array();
  for (const HoleRuns& h : s.holes) {
    holes.push_back({{"id", record::to_string(h.hole)},
                     {"runs", h.runs},
                     {"fewest", h.fewest},
                     {"most", h.most}});
  }
  nlohmann::ordered_json j = {{"schema", "zerodrop-runs/1"},
                              {"runs", s.runs},
                              {"passed", s.passed},
                              {"holes", holes},
                              {"each", runs}};
  std::ofstream out(path);
  out << j.dump(2) << '\n';
  if (!out) {
    throw Error(fmt::format("cannot write {}", path));
  }
}

}  // namespace

RunsSummary summarize_runs(const std::vector<diagnose::Diagnosis>& diagnoses) {
  RunsSummary s;
  s.runs = diagnoses.size();
  for (size_t i = 0; i < diagnoses.size(); ++i) {
    const diagnose::Diagnosis& d = diagnoses[i];
    s.passed += d.verdict == diagnose::Verdict::pass ? 1 : 0;
    s.race_miss.push_back(d.coverage.race_miss);
    for (const diagnose::HoleSummary& h : d.holes) {
      auto it = std::find_if(s.holes.begin(), s.holes.end(),
                             [&](const HoleRuns& r) { return r.hole == h.hole; });
      if (it == s.holes.end()) {
        s.holes.push_back({h.hole, {}, h.requests, h.requests});
        it = s.holes.end() - 1;
      }
      it->runs.push_back(i + 1);
      it->fewest = std::min(it->fewest, h.requests);
      it->most = std::max(it->most, h.requests);
    }
  }
  std::stable_sort(s.holes.begin(), s.holes.end(), [](const HoleRuns& a, const HoleRuns& b) {
    return a.runs.size() > b.runs.size();
  });
  return s;
}

std::string runs_text(const RunsSummary& s) {
  std::string out = fmt::format("{} of {} runs passed\n", s.passed, s.runs);
  for (const HoleRuns& h : s.holes) {
    std::string counts =
        h.fewest == h.most ? fmt::format("{}", h.most) : fmt::format("{}–{}", h.fewest, h.most);
    out +=
        fmt::format("  {} in {} of {} runs (run{} {}; {} request{} each)\n",
                    record::to_string(h.hole), h.runs.size(), s.runs, h.runs.size() == 1 ? "" : "s",
                    fmt::join(h.runs, ", "), counts, h.most == 1 ? "" : "s");
  }
  return out;
}

int run_repeated(Options options, int runs, const std::string& root, std::ostream& out,
                 const Finish& finish) {
  uint64_t first_seed = options.seed;
  std::vector<diagnose::Diagnosis> diagnoses;
  bool interrupted = false;
  for (int i = 1; i <= runs && !interrupted; ++i) {
    options.seed = first_seed + static_cast<uint64_t>(i - 1);
    options.out_dir = fmt::format("{}/run-{}", root, i);
    Result result = run(options);
    std::ostringstream report;  // each run's full report is in its folder
    diagnoses.push_back(finish(record::RunFolder(result.out_dir), result.run, report));
    out << run_line(static_cast<size_t>(i), runs, options.seed, diagnoses.back(), result.out_dir);
    out.flush();
    interrupted = result.interrupted;
  }
  RunsSummary summary = summarize_runs(diagnoses);
  out << '\n' << runs_text(summary);
  write_runs_json(root + "/runs.json", summary, diagnoses, first_seed);
  out << fmt::format("runs folder: {} (runs.json; run-N/report.html each)\n", root);
  if (interrupted) {
    return to_int(ExitCode::interrupted);
  }
  return to_int(summary.passed == summary.runs ? ExitCode::ok : ExitCode::failed);
}

}  // namespace zerodrop::lab
