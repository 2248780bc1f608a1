#pragma once

#include <map>
#include <optional>
#include <string>
#include <vector>

#include "record/run_folder.h"
#include "record/run_record.h"
#include "verify/agent_buckets.h"

namespace zerodrop::verify {

// When one node's routing stopped sending new connections to one terminating pod, as far as the
// agent on that node saw it: after `lo` (a fresh connection it opened then still reached the
// pod) and, when known, before `hi` (the misses after `lo` are too many for the pod to have
// still been in that node's rotation: each would have chosen it with chance 1/backends).
struct NodeUpdate {
  std::string node;  // the router: "node/NAME"
  std::string pod;
  record::Micros deleted{0};  // verify saw the deletion
  record::Micros lo{0};
  std::optional<record::Micros> hi;
  int hits = 0;      // fresh connections that reached the pod after its deletion was seen
  int misses = 0;    // fresh connections after the last hit that went to another pod
  int backends = 0;  // the rotation assumed: the pods seen answering in ±2 s, plus one
};

// Estimates every (node, deleted pod) update from the fresh connections of the node's agent
// (requests whose backend is known: answered by the pod, or given to it as the only pod
// terminating). `hi` holds with probability at least 1 - `error`.
std::vector<NodeUpdate> estimate_updates(const std::vector<record::Event>& events,
                                         const std::vector<record::RequestRecord>& requests,
                                         double error = 0.001);

// The same from per-request records and agents' buckets (by router: "node/NAME") together: a
// bucket gives its first and last fresh success exactly, so `lo` is the same as from the
// requests; its misses count from the bucket after `lo`'s on (fewer, so `hi` is as late or
// later: still an upper bound).
std::vector<NodeUpdate> estimate_updates(
    const std::vector<record::Event>& events, const std::vector<record::RequestRecord>& requests,
    const std::map<std::string, std::vector<BackendBucket>>& buckets, double error = 0.001);

// What the bounded updates tell the diagnosis, appended to `events` (not in time order) and set
// on `requests`:
// * a router_applied event (inferred) at each `hi`: the node had surely dropped the pod by then;
// * a failure's backend_candidates without the pods its node had surely dropped when it was sent
//   (one left: that is its backend);
// * a failure on a reused connection to pod X sent between the bounds of its node's update of X
//   loses its backend: before the update it is the race, after it keepalive-stale, and the
//   traffic cannot tell which. Returns how many lost it.
size_t apply_updates(const std::vector<NodeUpdate>& updates, std::vector<record::Event>& events,
                     std::vector<record::RequestRecord>& requests);

// Writes propagation.ndjson into the run folder (one NodeUpdate a line, times in µs on the run's
// clock and on the wall clock, `wall_start_us` being t = 0) and says each on stderr. Throws
// Error when the file cannot be written.
void write_propagation(const record::RunFolder& folder, const std::vector<NodeUpdate>& updates,
                       int64_t wall_start_us);

}  // namespace zerodrop::verify
