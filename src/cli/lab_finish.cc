// How a zerodrop lab run ends: its diagnosis and reports, and those of verify's agents in it.
#include "cli/lab_finish.h"

#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

#include <iostream>
#include <sstream>

#include "record/run_record.h"
#include "report/report.h"

namespace zerodrop::cli {

std::optional<std::string> new_temp_folder(const std::string& prefix) {
  std::string pattern = "/tmp/" + prefix + "-XXXXXX";
  if (::mkdtemp(pattern.data()) == nullptr) {
    return std::nullopt;
  }
  return pattern;
}

// The folder of this binary: the demo's example servers are in its examples/ sibling.
std::string lab_own_dir() {
  char path[PATH_MAX];
  ssize_t n = ::readlink("/proc/self/exe", path, sizeof path - 1);
  std::string exe = n > 0 ? std::string(path, static_cast<size_t>(n)) : ".";
  return exe.substr(0, exe.rfind('/'));
}

// Every lab run ends the same way: diagnosis, terminal report, report files and run.json.
diagnose::Diagnosis finish_lab_run(const record::RunFolder& folder, const record::RunRecord& run,
                                   std::ostream& out) {
  return report::finish_run(folder, run, out, {.tty = report::is_terminal(stdout)});
}

// The requests of verify's agents in this run, diagnosed with the lab's exact record into
// RUN/agents: what verify's diagnosis of the same requests is compared with.
void finish_agents(const std::string& out_dir, const record::RunRecord& agents) {
  record::RunFolder folder(out_dir + "/agents");
  record::RunWriter writer(folder, record::Traffic::requests);
  for (const record::Event& e : agents.events) {
    writer.write(e);
  }
  for (const record::RequestRecord& r : agents.requests) {
    writer.write(r);
  }
  writer.close();
  std::ostringstream terminal;
  report::finish_run(folder, agents, terminal, {});
  std::string verdict = terminal.str().substr(0, terminal.str().find('\n'));
  std::cout << "verify's agents, diagnosed by the lab: " << verdict << " (" << folder.dir()
            << ")\n";
}

}  // namespace zerodrop::cli
