#pragma once

#include <string>
#include <vector>

#include "record/run_record.h"
#include "verify/preflight.h"
#include "verify/verify.h"

namespace zerodrop::verify {

// The run folder: `out`, or a new temporary one under /tmp when it is empty. Throws Error.
std::string make_run_folder(const std::string& out);

// The head of a verify run's record: the preflight's scenario and what the run looked at (the
// namespace, Deployment, Service, --url targets, and a router per agent node).
record::RunRecord base_record(const Options& o, const Target& target,
                              const std::vector<std::string>& agent_nodes);

}  // namespace zerodrop::verify
