#pragma once

#include <sys/types.h>

#include <optional>
#include <string>
#include <vector>

namespace zerodrop::shim {

// The app run by `zerodrop run`: a direct child in its own process group (so that a signal sent
// to zerodrop's group, e.g. by a lab or a terminal, does not reach the app before the delay),
// with PR_SET_PDEATHSIG(SIGKILL) so it never outlives zerodrop, default signal dispositions
// and zerodrop's stdin/stdout/stderr. Not thread-safe.
class Child {
public:
  // Starts argv (argv[0] searched in PATH). Throws Error "cannot run 'x': <reason>".
  static Child spawn(const std::vector<std::string>& argv);

  pid_t pid() const { return pid_; }

  // Sends `signal` to the child's process group (dumb-init style); ignored once it has exited.
  void signal_group(int signal) const;

  // Reaps every exited child and orphan (PID 1 and subreaper duty). Returns the app's exit code
  // (128+N when killed by signal N) once the app itself has exited; stays set afterwards.
  std::optional<int> reap();

  std::optional<int> exit_code() const { return exit_code_; }

private:
  explicit Child(pid_t pid) : pid_(pid) {}

  pid_t pid_;
  std::optional<int> exit_code_;
};

// Makes this process the reaper of its descendants' orphans when it is not PID 1 (tini -s).
void become_subreaper();

}  // namespace zerodrop::shim
