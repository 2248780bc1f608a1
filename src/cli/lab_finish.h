#pragma once
// How a zerodrop lab run ends (lab_command.cc and the demo, runs and workloads it drives).

#include <optional>
#include <ostream>
#include <string>

#include "diagnose/diagnose.h"
#include "record/run_folder.h"
#include "record/run_record.h"

namespace zerodrop::cli {

// A new folder /tmp/PREFIX-XXXXXX (mkdtemp), nullopt when it cannot be made.
std::optional<std::string> new_temp_folder(const std::string& prefix);

// The folder of this binary: the demo's example servers are in its examples/ sibling.
std::string lab_own_dir();

// Every lab run ends the same way: diagnosis, terminal report (coloured on a terminal), report
// files and run.json in `folder`. Returns the diagnosis.
diagnose::Diagnosis finish_lab_run(const record::RunFolder& folder, const record::RunRecord& run,
                                   std::ostream& out);

// The requests of verify's agents in a lab run, diagnosed with the lab's exact record into
// OUT_DIR/agents, and their verdict line on stdout: what verify's diagnosis of the same requests
// is compared with.
void finish_agents(const std::string& out_dir, const record::RunRecord& agents);

}  // namespace zerodrop::cli
