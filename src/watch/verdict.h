#pragma once

#include <cstdint>
#include <functional>
#include <string>
#include <utility>
#include <vector>

#include "record/run_folder.h"
#include "record/run_record.h"
#include "watch/rollouts.h"

namespace zerodrop::watch {

// What the diagnosis of one rollout's record says, as watch reports it: handed back by the
// cli's Finish, so the engine links neither diagnose nor report.
struct Verdict {
  uint64_t requests = 0;
  uint64_t failed = 0;
  std::vector<std::pair<std::string, uint64_t>> holes;  // hole id -> requests, most first
  // (hole id, outcome class) -> requests
  std::vector<std::pair<std::pair<std::string, std::string>, uint64_t>> by_hole_class;
  std::string fix;  // the first hole's fix in one line ("preStop sleep 3 s, …"), may be empty
};

// Diagnoses the record, writes report.json, report.html, run.json and junit.xml into the folder
// and returns the verdict. Throws Error when a file cannot be written.
using Finish = std::function<Verdict(const record::RunFolder&, const record::RunRecord&)>;

// One rollout as measured.
struct RolloutResult {
  WorkloadKey key;
  RolloutEnd end = RolloutEnd::complete;
  std::string end_reason;
  bool whole = true;    // measured from its start (false: watch came in mid-rollout)
  int agents = 0;       // agents whose traffic the measurement holds
  int agents_lost = 0;  // agents that stopped reporting during it (their silence is no drop)
  std::string folder;   // the run folder's name under --out
  Verdict verdict;
  // Per node and deleted pod: when the node had surely dropped it, seconds after its deletion.
  std::vector<std::pair<std::string, double>> propagation;
};

// The verdict label: "clean", "dropped", "partial" (watch missed the start: no verdict for the
// whole rollout) or "unmeasured" (no agent traffic to the Service).
std::string_view verdict_label(const RolloutResult& r);

// The Event watch posts on the workload at the rollout's end: reason and message, Normal or
// Warning. "RolloutDroppedRequests", "12 of 3,410 requests failed: deregistration-race 12; fix:
// …; run …" / "RolloutClean", "0 of 3,390 requests failed; run …" / "RolloutPartial" /
// "RolloutUnmeasured".
struct EventText {
  std::string reason;
  std::string message;
  bool warning = false;
};

EventText event_text(const RolloutResult& r);

// 3410 -> "3,410".
std::string thousands(uint64_t n);

}  // namespace zerodrop::watch
