#pragma once

#include <sys/types.h>

#include <optional>
#include <string>
#include <utility>
#include <vector>

namespace zerodrop {

// How a child process ended: exactly one of exit_code and signal is set.
struct ExitStatus {
  std::optional<int> exit_code;
  std::optional<int> signal;
  // "exit code 0", "killed by SIGKILL".
  std::string describe() const;

  bool success() const { return exit_code == 0; }
};

// What to run and where its output goes.
struct SpawnOptions {
  std::vector<std::string> argv;  // argv[0] is searched in PATH when it has no '/'
  std::vector<std::pair<std::string, std::string>> env;  // set on top of the inherited environment
  std::string stdout_path;                               // appended to; empty = /dev/null
  std::string stderr_path;  // appended to; empty = /dev/null; may equal stdout_path
};

// A child process in its own process group that cannot outlive this process, even when this
// process is killed with SIGKILL: a small keeper process (a fork of this one, no exec) holds the
// child, has PR_SET_PDEATHSIG, and kills the child's whole process group when its parent dies.
// The child itself has PR_SET_PDEATHSIG(SIGKILL) towards the keeper. PR_SET_PDEATHSIG fires when
// the *thread* that spawned it exits: spawn from a thread that lives as long as the children.
// Not thread-safe; movable.
class Subprocess {
public:
  // Starts the child. Throws Error "cannot run 'argv0': <reason>" when it cannot be executed
  // (missing file, no permission) or a log file cannot be opened.
  static Subprocess spawn(const SpawnOptions& options);

  Subprocess(Subprocess&& other) noexcept;
  Subprocess& operator=(Subprocess&& other) noexcept;
  Subprocess(const Subprocess&) = delete;
  Subprocess& operator=(const Subprocess&) = delete;
  // Kills the process group with SIGKILL and reaps it if it still runs.
  ~Subprocess();

  // The child's pid (also its process group id).
  pid_t pid() const { return pid_; }

  // Sends `signal` to the child's whole process group; does nothing once it has been reaped.
  void send_signal(int signal);
  // Non-blocking: the status once the child has exited (reaped exactly once; later calls return
  // the same status), nullopt while it runs.
  std::optional<ExitStatus> try_wait();
  // Blocks until the child exits.
  ExitStatus wait();

  // Readable when try_wait() may have news: for an event loop to wait on. Owned by this object.
  int status_fd() const { return status_fd_; }

  bool exited() const { return status_.has_value(); }

private:
  Subprocess() = default;
  std::optional<ExitStatus> read_status(bool block);
  void release();

  pid_t keeper_ = -1;
  pid_t pid_ = -1;
  int status_fd_ = -1;
  std::optional<ExitStatus> status_;
};

// The short name of a signal (glibc's sigabbrev_np): "TERM", "WINCH"; "37" when it has none.
std::string signal_name(int signal);
// The same with its prefix: "SIGTERM", "SIGWINCH"; "SIG37" when it has none.
std::string signal_full_name(int signal);
// The number of "TERM", "SIGTERM", "15"; nullopt when unknown.
std::optional<int> signal_from_name(const std::string& name);

}  // namespace zerodrop
