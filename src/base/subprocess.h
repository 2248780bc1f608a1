#pragma once

#include <sys/types.h>

#include <optional>
#include <string>
#include <string_view>
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

// How a child is held. A PID namespace makes it PID 1 of its own, as in a container: the kernel
// drops a signal PID 1 has no handler for, orphans are reparented to it, and its death (SIGKILL)
// kills every process of the namespace.
enum class Isolation {
  process_group,       // its own process group only
  pid_namespace,       // PID 1 of a new PID namespace (needs CAP_SYS_ADMIN: root)
  user_pid_namespace,  // the same inside a new user namespace mapping only the caller's ids
};

// "a process group", "a PID namespace", "a user and PID namespace".
std::string describe(Isolation isolation);

// The strongest isolation this host allows, tried in a short-lived child: a PID namespace, else
// one inside an unprivileged user namespace, else a process group. Safe with threads running.
Isolation probe_isolation();

// Which of the child's standard streams are pipes whose other end this process holds (see
// Subprocess::stdin_fd()); the others are /dev/null (stdin) or the log files.
enum class Pipes : unsigned {
  none = 0,
  in = 1,   // stdin: what this process writes, until it closes its end
  out = 2,  // stdout, instead of stdout_path
  err = 4,  // stderr, instead of stderr_path
};

constexpr Pipes operator|(Pipes a, Pipes b) {
  return static_cast<Pipes>(static_cast<unsigned>(a) | static_cast<unsigned>(b));
}

constexpr bool has(Pipes set, Pipes one) {
  return (static_cast<unsigned>(set) & static_cast<unsigned>(one)) != 0;
}

// What to run and where its output goes.
struct SpawnOptions {
  std::vector<std::string> argv;  // argv[0] is searched in PATH when it has no '/'
  std::vector<std::pair<std::string, std::string>> env;  // set on top of the inherited environment
  std::string stdout_path;                               // appended to; empty = /dev/null
  std::string stderr_path;  // appended to; empty = /dev/null; may equal stdout_path
  Isolation isolation = Isolation::process_group;
  Pipes pipes = Pipes::none;
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

  // The child's pid as this process sees it (also its process group id).
  pid_t pid() const { return pid_; }

  Isolation isolation() const { return isolation_; }

  // Sends `signal` to the child's whole process group, or in a PID namespace to its PID 1 only
  // (as a container runtime does; SIGKILL of PID 1 ends the namespace). Does nothing once reaped.
  void send_signal(int signal);
  // Non-blocking: the status once the child has exited (reaped exactly once; later calls return
  // the same status), nullopt while it runs.
  std::optional<ExitStatus> try_wait();
  // Blocks until the child exits.
  ExitStatus wait();

  // Readable when try_wait() may have news: for an event loop to wait on. Owned by this object.
  int status_fd() const { return status_fd_; }

  // This process's ends of the pipes SpawnOptions::pipes asked for (-1 for the others), owned by
  // this object, close-on-exec and blocking. close_stdin() sends the child end-of-file.
  int stdin_fd() const { return in_fd_; }

  int stdout_fd() const { return out_fd_; }

  int stderr_fd() const { return err_fd_; }

  void close_stdin();

  bool exited() const { return status_.has_value(); }

private:
  Subprocess() = default;
  std::optional<ExitStatus> read_status(bool block);
  void release();

  pid_t keeper_ = -1;
  pid_t pid_ = -1;
  Isolation isolation_ = Isolation::process_group;
  int status_fd_ = -1;
  int in_fd_ = -1;
  int out_fd_ = -1;
  int err_fd_ = -1;
  std::optional<ExitStatus> status_;
};

// What a command run to its end printed, and how it ended.
struct Captured {
  ExitStatus status;
  std::string out;
  std::string err;
};

// Runs options.argv to its end in the calling thread's namespaces (a thread that entered a
// network namespace runs it there), writing `input` to its stdin and capturing its stdout and
// stderr through pipes (read together, so neither can fill and stall the child; the paths and
// pipes in `options` are ignored). Throws Error as Subprocess::spawn does.
Captured run_captured(SpawnOptions options, std::string_view input = {});

// Whether process `pid` has a handler for `signal` (SigCgt) or ignores it (SigIgn), read from
// /proc/PID/status; nullopt when the process is gone. Both false: the default action.
struct SignalDisposition {
  bool caught = false;
  bool ignored = false;
};

std::optional<SignalDisposition> signal_disposition(pid_t pid, int signal);

// The short name of a signal (glibc's sigabbrev_np): "TERM", "WINCH"; "37" when it has none.
std::string signal_name(int signal);
// The same with its prefix: "SIGTERM", "SIGWINCH"; "SIG37" when it has none.
std::string signal_full_name(int signal);
// The number of "TERM", "SIGTERM", "15"; nullopt when unknown.
std::optional<int> signal_from_name(const std::string& name);

}  // namespace zerodrop
