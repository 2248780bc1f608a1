#pragma once

#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "lab/routers/router.h"
#include "record/run_record.h"

namespace zerodrop::lab {

class Recorder;

// The requests that Job pods running `zerodrop verify-agent` sent through the lab's routers,
// read back from their logs and joined, as the lab's own load is, to the backend each node's
// router chose: the lab's exact view of the traffic a verify run measured.
struct JobTraffic {
  std::vector<record::RequestRecord> requests;  // on the recorder's timeline, router = node
  size_t agents = 0;                            // logs that held an agent stream
  size_t unjoined = 0;                          // requests whose connection the router did not know
};

// Reads every pod log in `pods_dir` that holds an agent stream (a `hello` line with its node and
// wall-clock start, then `req` lines). `wall_start_us` is the recorder's t = 0 on the wall clock.
// Throws Error naming the log and line of a malformed request.
JobTraffic read_job_traffic(const std::string& pods_dir, int64_t wall_start_us,
                            const std::vector<std::unique_ptr<Router>>& routers,
                            const Recorder& recorder);

// The lab's record `run` with the agents' requests in place of its own load's, and a note saying
// so: the same rollout, its exact events, diagnosed over the requests verify measured. nullopt
// when no Job pod ran an agent.
std::optional<record::RunRecord> agents_run(const record::RunRecord& run, JobTraffic traffic);

}  // namespace zerodrop::lab
