#pragma once

#include <vector>

#include "diagnose/diagnose.h"
#include "diagnose/facts.h"
#include "diagnose/rules.h"
#include "record/run_record.h"

namespace zerodrop::diagnose {

// Groups the attributed failures into one summary per hole (most requests first, `unexplained`
// last) with counts, times, pods, routers and the evidence sentence. Fixes are left empty.
// Internal to diagnose.
std::vector<HoleSummary> summarize(const record::RunRecord& run,
                                   const std::vector<RequestDiagnosis>& failures,
                                   const Facts& facts, const RuleContext& context);

// The fewest pods Ready (in truth) at the send times of `hole`'s failures.
int min_ready_during(const record::RunRecord& run, const std::vector<RequestDiagnosis>& failures,
                     record::Hole hole, const Facts& facts);

}  // namespace zerodrop::diagnose
