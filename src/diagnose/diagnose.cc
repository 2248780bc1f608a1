#include "diagnose/diagnose.h"

#include <array>

namespace zerodrop::diagnose {
namespace {

constexpr std::array<std::string_view, 8> kStateNames = {
    "unknown", "starting", "warming", "serving", "prestop", "after_signal", "exited", "killed",
};

}  // namespace

std::string_view to_string(BackendState state) {
  return kStateNames[static_cast<size_t>(state)];
}

// Minimal first version: totals and verdict; the attribution rules follow.
Diagnosis diagnose(const record::RunRecord& run, const Options& /*options*/) {
  Diagnosis d;
  for (size_t i = 0; i < run.requests.size(); ++i) {
    const record::RequestRecord& r = run.requests[i];
    ++d.totals.requests;
    if (r.failed) {
      ++d.totals.failed;
      d.failures.push_back(
          {i, record::Hole::unexplained, BackendState::unknown, false, "not yet diagnosed"});
    } else {
      ++d.totals.ok;
    }
  }
  d.verdict = d.totals.failed == 0 ? Verdict::pass : Verdict::fail;
  d.conclusion = d.verdict == Verdict::pass ? "no request failed" : "requests failed";
  return d;
}

}  // namespace zerodrop::diagnose
