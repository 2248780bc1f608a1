#pragma once

#include <optional>
#include <string>

#include "diagnose/diagnose.h"
#include "diagnose/facts.h"
#include "record/run_record.h"

namespace zerodrop::diagnose {

// What the rules and evidence need beyond the events: scenario settings and the drain measured.
struct RuleContext {
  std::optional<int> replicas;                 // the scenario's replica count, when known
  std::optional<record::Readiness> readiness;  // the scenario's readiness probe
  std::string drain_evidence;                  // where the longest drain was measured
  std::string version_a, version_b;  // the two versions' commands, when the run rolled A to B
};

// Attributes one failed request to a hole (or `unexplained`, with the reason no rule matched).
// `index` is the request's position in RunRecord::requests. Internal to diagnose.
RequestDiagnosis attribute(const record::RequestRecord& request, size_t index, const Facts& facts,
                           const RuleContext& context);

}  // namespace zerodrop::diagnose
