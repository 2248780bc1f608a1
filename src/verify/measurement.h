#pragma once

// The end of one measurement, shared by `zerodrop verify` (one rollout it drives) and
// `zerodrop watch` (every rollout it sees): the timeline closed into the run record.

#include "record/run_folder.h"
#include "record/run_record.h"
#include "verify/timeline.h"

namespace zerodrop::verify {

// Closes `timeline` into `head` (its engine and scenario): the end time is now, failed requests
// without a backend are attributed (attribute_to_terminating), each node's update of each deleted
// pod is estimated from the agents' traffic and written to propagation.ndjson in `folder`. The
// record is then ready for the cli's finish (diagnosis and reports). Throws Error when a file of
// the folder cannot be written.
record::RunRecord close_measurement(Timeline& timeline, record::RunRecord head,
                                    const record::RunFolder& folder);

}  // namespace zerodrop::verify
