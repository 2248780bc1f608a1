#pragma once

#include "record/run_record.h"

namespace zerodrop::lab {

// The part of a run that belongs to one of its rollouts, for a report of that rollout alone:
// the requests the load meant to send (and the time buckets that start) from `from` (the end of
// the rollout before's tail, or the run's start) until `to` (the end of this rollout's tail), and
// every event until `to` except the rollout events before `from` (the diagnosis reads the first
// rollout it finds; the pods' earlier events stay, their lives began before). Ends at `to`.
record::RunRecord rollout_slice(const record::RunRecord& run, record::Micros from,
                                record::Micros to);

}  // namespace zerodrop::lab
