#pragma once

#include <string>
#include <vector>

#include "load/load.h"

namespace zerodrop::load {

// The final summary for a terminal or a log: counts, failures by class, latency percentiles,
// late and unsent requests, disruption. Several lines, each ending in '\n'.
std::string format_summary(const Summary& summary);

// One live line for an interval: elapsed, completed, ok, failures by class, p50/p99.
std::string format_interval(const Summary& interval);

// The summary as a JSON document (schema in docs/load.md), pretty-printed, ending in '\n'.
std::string summary_json(const Summary& summary);

// The disruption as run-record events for a run folder (`--out`): disruption_started and
// disruption_ended at the longest stretch of consecutive failures; none when nothing failed.
std::vector<record::Event> disruption_events(const Summary& summary);

}  // namespace zerodrop::load
