#pragma once

#include <optional>
#include <ostream>

#include "verify/agents.h"
#include "verify/preflight.h"
#include "verify/verify.h"

namespace zerodrop::verify {

// `zerodrop verify --dry-run`: after the preflight, what the run would do. The plan (action,
// rate, agents, durations) as YAML comments, then every object it would create — the anchor
// ConfigMap and the agents' Job owning to it — as YAML documents (`kubectl apply -f` reads
// them); the anchor's uid is only known once created. `job` is absent with --agents none.
void print_dry_run(std::ostream& out, const Options& options, const Target& target,
                   const std::optional<AgentJob>& job);

}  // namespace zerodrop::verify
