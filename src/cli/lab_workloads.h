#pragma once

#include <functional>
#include <ostream>
#include <string>
#include <utility>
#include <vector>

#include "diagnose/diagnose.h"
#include "lab/lab.h"
#include "record/run_folder.h"
#include "record/run_record.h"

namespace zerodrop::cli {

// One workload of a --workloads file: a line "NAME: FLAGS -- COMMAND ARGS…" (blank lines and
// lines starting with '#' are skipped).
struct WorkloadLine {
  std::string name;
  std::string args;  // the lab's flags and command, as on its command line
  int line = 0;
};

// Throws Error naming the file (and line): unreadable, a line without "NAME:", a name that is
// not a lowercase DNS label (it names the Deployment and Service), a name given twice, none.
std::vector<WorkloadLine> read_workloads(const std::string& path);

// Writes one rollout's record and report into DIR/rollouts/INDEX and prints its verdict line,
// "rollout INDEX of NAME: …", on `out`.
void write_rollout(const std::string& dir, const std::string& workload, int index,
                   const record::RunRecord& rollout, std::ostream& out);

using FinishRun = std::function<diagnose::Diagnosis(const record::RunFolder&,
                                                    const record::RunRecord&, std::ostream&)>;

// Runs the workloads at once in this process, each a lab run of its own (its pods, routers,
// load and run folder ROOT/NAME) and all served by one Kubernetes API on `api`'s address: each
// its Deployment and Service NAME, its pods NAME-pod-N. Says on stderr where the API is once every
// workload is in it. Each run ends after its rollouts (Options::rollouts), each reported in
// ROOT/NAME/rollouts/K; then `finish` reports each whole run. The cluster's own notes (Jobs,
// DaemonSets) and their pods' logs are in ROOT. Returns the exit code: 2 when a workload
// failed to run, else 130 when interrupted, else 1 when any dropped requests, else 0.
int run_workloads(std::vector<std::pair<std::string, lab::Options>> workloads,
                  const lab::KubeApiOptions& api, const std::string& root, std::ostream& out,
                  const FinishRun& finish);

// --workloads FILE: reads it, makes each line's lab::Options with `parse` (the line's flags and
// command), each waiting for `rollouts` client rollouts, and runs them (run_workloads) in `out_dir`
// (empty: a new folder under /tmp). Errors name the file and line.
int run_workload_file(const std::string& path,
                      const std::function<lab::Options(const std::string& args)>& parse,
                      const lab::KubeApiOptions& api, int rollouts, const std::string& out_dir,
                      std::ostream& out, const FinishRun& finish);

}  // namespace zerodrop::cli
