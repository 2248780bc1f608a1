#pragma once

#include <sys/types.h>

#include <chrono>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "base/subprocess.h"

namespace zerodrop {

// One process event of the whole host, as the kernel reported it (threads left out).
struct ProcessEvent {
  enum class Kind { fork, exec, comm, exit };
  Kind kind = Kind::exit;
  pid_t pid = 0;                            // the process (fork: the new child)
  pid_t parent = 0;                         // fork: the process that forked
  std::string comm;                         // comm: its new name (prctl PR_SET_NAME)
  ExitStatus status;                        // exit: how it ended
  std::chrono::steady_clock::time_point t;  // the kernel's stamp (CLOCK_MONOTONIC)
};

// The kernel's process events (the netlink proc connector): forks, execs, renames and exits of
// every process on the host, with their exit status and the kernel's time stamp. Needs
// CAP_NET_ADMIN. Not thread-safe; movable.
class ProcessEvents {
public:
  // Subscribes; nullopt with `why` set when the host refuses (not root, no proc connector).
  static std::optional<ProcessEvents> open(std::string& why);

  ProcessEvents(ProcessEvents&& other) noexcept;
  ProcessEvents& operator=(ProcessEvents&& other) noexcept;
  ProcessEvents(const ProcessEvents&) = delete;
  ProcessEvents& operator=(const ProcessEvents&) = delete;
  ~ProcessEvents();

  // Readable when read() has news: for an event loop to wait on.
  int fd() const { return fd_; }

  // Non-blocking: every event queued so far, oldest first. Sets `lost` when the kernel dropped
  // some because the queue was full.
  std::vector<ProcessEvent> read(bool& lost);

private:
  explicit ProcessEvents(int fd) : fd_(fd) {}

  int fd_ = -1;
};

// The name the kernel keeps for a process (/proc/PID/comm), empty when it is gone.
std::string process_name(pid_t pid);

}  // namespace zerodrop
