#pragma once

#include <iosfwd>
#include <string>

namespace zerodrop::lab {

// `zerodrop lab --demo`: naive and close-listener without preStop (both drop requests), then
// graceful with a preStop sleep longer than the propagation (drops none), each with its report,
// then the three side by side. `examples_dir` holds the example binaries; each run gets a folder
// under `out_root`. Returns the exit code: 0 when the three behave as described, 1 otherwise.
int run_demo(const std::string& examples_dir, const std::string& out_root, std::ostream& out);

}  // namespace zerodrop::lab
