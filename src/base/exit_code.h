#pragma once

namespace zerodrop {

// Process exit codes shared by every subcommand.
enum class ExitCode : int {
  ok = 0,            // the check passed: no request dropped, no finding at the threshold
  failed = 1,        // the check failed: requests dropped, findings at or above the threshold
  usage = 2,         // bad flags or input
  interrupted = 130  // SIGINT/SIGTERM; what was recorded so far is still written
};

constexpr int to_int(ExitCode code) { return static_cast<int>(code); }

}  // namespace zerodrop
