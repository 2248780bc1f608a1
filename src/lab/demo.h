#pragma once

#include <functional>
#include <iosfwd>
#include <string>

#include "diagnose/diagnose.h"
#include "record/run_folder.h"

namespace zerodrop::lab {

// `zerodrop lab --demo`: naive and close-listener without preStop (both drop requests), then
// graceful with a preStop sleep longer than the propagation (drops none), each with its report,
// then the three side by side. `examples_dir` holds the example binaries; each run gets a folder
// under `out_root`, and `finish` ends each run (report::finish_run: diagnosis, terminal report,
// report files), so the lab need not know the renderers. Returns the exit code: 0 when the three
// behave as described, 1 when they do not, 130 when interrupted.
using Finish = std::function<diagnose::Diagnosis(const record::RunFolder&, const record::RunRecord&,
                                                 std::ostream&)>;
int run_demo(const std::string& examples_dir, const std::string& out_root, std::ostream& out,
             const Finish& finish);

}  // namespace zerodrop::lab
