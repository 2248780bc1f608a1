#include "base/subprocess.h"

#include <fcntl.h>
#include <poll.h>
#include <sched.h>
#include <signal.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <fstream>
#include <map>

#include <fmt/format.h>

#include "base/error.h"

extern char** environ;

namespace zerodrop {
namespace {

// Fixed descriptor numbers inside the keeper and the child (everything else is closed there).
constexpr int kErrorFd = 3;   // child -> spawner: errno of a failed exec (close-on-exec)
constexpr int kStatusFd = 4;  // keeper -> spawner: the child's pid, then its wait status
constexpr int kOutFd = 5;
constexpr int kErrFd = 6;
constexpr int kInFd = 7;
constexpr int kFirstFree = 8;

// Everything the forked processes need, prepared before fork(): after fork() in a multi-threaded
// process only async-signal-safe calls are allowed, so no allocation happens there.
struct Prepared {
  Isolation isolation = Isolation::process_group;
  std::string uid_map;  // "UID UID 1": the caller's ids mapped onto themselves
  std::string gid_map;
  std::string path;
  std::vector<std::string> argv_storage;
  std::vector<std::string> env_storage;
  std::vector<char*> argv;
  std::vector<char*> envp;
};

std::string resolve_in_path(const std::string& name) {
  if (name.find('/') != std::string::npos) {
    return name;
  }
  const char* path = ::getenv("PATH");
  std::string dirs = path != nullptr ? path : "/usr/local/bin:/usr/bin:/bin";
  size_t start = 0;
  while (start <= dirs.size()) {
    size_t end = dirs.find(':', start);
    end = end == std::string::npos ? dirs.size() : end;
    std::string dir = dirs.substr(start, end - start);
    std::string candidate = (dir.empty() ? std::string(".") : dir) + "/" + name;
    if (::access(candidate.c_str(), X_OK) == 0) {
      return candidate;
    }
    start = end + 1;
  }
  throw Error(fmt::format("cannot run '{}': not found in PATH", name));
}

Prepared prepare(const SpawnOptions& options) {
  if (options.argv.empty() || options.argv[0].empty()) {
    throw Error("cannot run an empty command");
  }
  Prepared p;
  p.isolation = options.isolation;
  p.uid_map = fmt::format("{0} {0} 1", ::getuid());
  p.gid_map = fmt::format("{0} {0} 1", ::getgid());
  p.path = resolve_in_path(options.argv[0]);
  p.argv_storage = options.argv;
  std::map<std::string, std::string> env;
  for (char** e = environ; *e != nullptr; ++e) {
    std::string_view entry(*e);
    size_t eq = entry.find('=');
    if (eq != std::string_view::npos) {
      env[std::string(entry.substr(0, eq))] = std::string(entry.substr(eq + 1));
    }
  }
  for (const auto& [key, value] : options.env) {
    env[key] = value;
  }
  for (const auto& [key, value] : env) {
    p.env_storage.push_back(key + "=" + value);
  }
  for (std::string& a : p.argv_storage) {
    p.argv.push_back(a.data());
  }
  p.argv.push_back(nullptr);
  for (std::string& e : p.env_storage) {
    p.envp.push_back(e.data());
  }
  p.envp.push_back(nullptr);
  return p;
}

// A descriptor at or above 10, close-on-exec, so that the fixed numbers 3..7 are free to use.
int high_fd(int fd) {
  int moved = ::fcntl(fd, F_DUPFD_CLOEXEC, 10);
  ::close(fd);
  return moved;
}

int open_log(const std::string& path, const std::string& argv0) {
  int fd = path.empty() ? ::open("/dev/null", O_WRONLY | O_CLOEXEC)
                        : ::open(path.c_str(), O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC, 0644);
  if (fd < 0) {
    throw Error(fmt::format("cannot run '{}': cannot open log file '{}': {}", argv0, path,
                            ::strerror(errno)));
  }
  return high_fd(fd);
}

void close_from(int first) {
  if (::syscall(SYS_close_range, first, ~0U, 0) != 0) {
    for (int fd = first; fd < 4096; ++fd) {
      ::close(fd);
    }
  }
}

bool write_file(const char* path, const std::string& text) {
  int fd = ::open(path, O_WRONLY | O_CLOEXEC);
  if (fd < 0) {
    return false;
  }
  bool ok = ::write(fd, text.data(), text.size()) == static_cast<ssize_t>(text.size());
  ::close(fd);
  return ok;
}

// After fork(), async-signal-safe: makes the caller's next child PID 1 of a new PID namespace
// (in a new user namespace when asked). Returns 0 or the errno of what failed.
int enter_namespace(const Prepared& p) {
  if (p.isolation == Isolation::pid_namespace) {
    return ::unshare(CLONE_NEWPID) == 0 ? 0 : errno;
  }
  if (::unshare(CLONE_NEWUSER | CLONE_NEWPID) != 0) {
    return errno;
  }
  // Without a mapping the caller's files would read as owned by nobody and creating one fails.
  bool mapped = write_file("/proc/self/setgroups", "deny")
                && write_file("/proc/self/uid_map", p.uid_map)
                && write_file("/proc/self/gid_map", p.gid_map);
  return mapped ? 0 : (errno != 0 ? errno : EPERM);
}

// In the child, after fork(): becomes its own process group, dies with the keeper, execs.
[[noreturn]] void exec_child(const Prepared& p, pid_t keeper) {
  ::setpgid(0, 0);
  ::prctl(PR_SET_PDEATHSIG, SIGKILL);
  // PID 1 of a namespace sees no parent (getppid() is 0): the check is for a process group.
  if (p.isolation == Isolation::process_group && ::getppid() != keeper) {
    ::_exit(127);
  }
  sigset_t none;
  sigemptyset(&none);
  ::sigprocmask(SIG_SETMASK, &none, nullptr);
  ::signal(SIGINT, SIG_DFL);  // the keeper ignores SIGINT; exec keeps ignored dispositions
  ::signal(SIGPIPE, SIG_DFL);
  ::dup2(kInFd, 0);
  ::dup2(kOutFd, 1);
  ::dup2(kErrFd, 2);
  for (int fd : {kStatusFd, kOutFd, kErrFd, kInFd}) {
    ::close(fd);
  }
  ::fcntl(kErrorFd, F_SETFD, FD_CLOEXEC);
  ::execve(p.path.c_str(), p.argv.data(), p.envp.data());
  int error = errno;
  (void)!::write(kErrorFd, &error, sizeof error);
  ::_exit(127);
}

// The keeper, after fork(): starts the child, reports its pid and exit status, and kills the
// child's process group when the spawner dies (PR_SET_PDEATHSIG) or asks it to (SIGTERM).
[[noreturn]] void run_keeper(const Prepared& p, pid_t spawner) {
  sigset_t waited;
  sigemptyset(&waited);
  for (int s : {SIGCHLD, SIGUSR1, SIGTERM, SIGHUP}) {
    sigaddset(&waited, s);
  }
  ::sigprocmask(SIG_BLOCK, &waited, nullptr);
  ::signal(SIGINT, SIG_IGN);  // Ctrl-C is the spawner's to handle; it stops the child itself
  ::prctl(PR_SET_PDEATHSIG, SIGUSR1);
  if (::getppid() != spawner) {
    ::_exit(1);
  }
  pid_t self = ::getpid();
  if (p.isolation != Isolation::process_group) {
    if (int error = enter_namespace(p); error != 0) {
      error = -error;  // negative: the namespace failed, not the exec
      (void)!::write(kErrorFd, &error, sizeof error);
      ::_exit(1);
    }
  }
  pid_t child = ::fork();
  if (child == 0) {
    exec_child(p, self);
  }
  if (child < 0) {
    int error = errno;
    (void)!::write(kErrorFd, &error, sizeof error);
    ::_exit(1);
  }
  ::setpgid(child, child);
  for (int fd : {kErrorFd, kOutFd, kErrFd, kInFd}) {
    ::close(fd);
  }
  (void)!::write(kStatusFd, &child, sizeof child);
  int status = 0;
  for (;;) {
    int sig = ::sigwaitinfo(&waited, nullptr);
    if (sig == SIGCHLD) {
      if (::waitpid(child, &status, WNOHANG) == child) {
        break;
      }
      continue;
    }
    if (sig > 0) {  // the spawner died or wants the child gone
      ::kill(-child, SIGKILL);
      ::waitpid(child, &status, 0);
      break;
    }
  }
  ::kill(-child, SIGKILL);  // like a container: when its main process ends, the rest goes too
  (void)!::write(kStatusFd, &status, sizeof status);
  ::_exit(0);
}

ExitStatus from_wait_status(int status) {
  ExitStatus s;
  if (WIFEXITED(status)) {
    s.exit_code = WEXITSTATUS(status);
  } else if (WIFSIGNALED(status)) {
    s.signal = WTERMSIG(status);
  } else {
    s.signal = SIGKILL;
  }
  return s;
}

bool read_exact(int fd, void* data, size_t size) {
  auto* bytes = static_cast<char*>(data);
  size_t got = 0;
  while (got < size) {
    ssize_t n = ::read(fd, bytes + got, size - got);
    if (n < 0 && errno == EINTR) {
      continue;
    }
    if (n <= 0) {
      return false;
    }
    got += static_cast<size_t>(n);
  }
  return true;
}

}  // namespace

std::string ExitStatus::describe() const {
  if (exit_code) {
    return fmt::format("exit code {}", *exit_code);
  }
  return fmt::format("killed by SIG{}", signal_name(signal.value_or(0)));
}

Subprocess Subprocess::spawn(const SpawnOptions& options) {
  Prepared p = prepare(options);
  const std::string& name = options.argv[0];
  // The child's ends (high, close-on-exec; the keeper moves them to 5..7) and this process's.
  int in = -1;
  int out = -1;
  int err = -1;
  int mine[3] = {-1, -1, -1};
  auto pipe_end = [&](Pipes which, int& child_end, int& my_end) {
    int fds[2];
    if (!has(options.pipes, which)) {
      return;
    }
    if (::pipe2(fds, O_CLOEXEC) != 0) {
      throw Error(fmt::format("cannot run '{}': pipe: {}", name, ::strerror(errno)));
    }
    bool child_reads = which == Pipes::in;
    child_end = high_fd(fds[child_reads ? 0 : 1]);
    my_end = fds[child_reads ? 1 : 0];
  };
  pipe_end(Pipes::in, in, mine[0]);
  pipe_end(Pipes::out, out, mine[1]);
  pipe_end(Pipes::err, err, mine[2]);
  in = in >= 0 ? in : high_fd(::open("/dev/null", O_RDONLY | O_CLOEXEC));
  out = out >= 0 ? out : open_log(options.stdout_path, name);
  err = err >= 0 ? err : open_log(options.stderr_path, name);
  int error_pipe[2];
  int status_pipe[2];
  if (::pipe2(error_pipe, O_CLOEXEC) != 0 || ::pipe2(status_pipe, O_CLOEXEC) != 0) {
    throw Error(fmt::format("cannot run '{}': pipe: {}", name, ::strerror(errno)));
  }
  int error_w = high_fd(error_pipe[1]);
  int status_w = high_fd(status_pipe[1]);
  pid_t spawner = ::getpid();
  pid_t keeper = ::fork();
  if (keeper == 0) {
    ::dup2(error_w, kErrorFd);
    ::dup2(status_w, kStatusFd);
    ::dup2(out, kOutFd);
    ::dup2(err, kErrFd);
    ::dup2(in, kInFd);
    close_from(kFirstFree);
    run_keeper(p, spawner);
  }
  for (int fd : {in, out, err, error_w, status_w}) {
    ::close(fd);
  }
  if (keeper < 0) {
    for (int fd : {error_pipe[0], status_pipe[0], mine[0], mine[1], mine[2]}) {
      if (fd >= 0) {
        ::close(fd);
      }
    }
    throw Error(fmt::format("cannot run '{}': fork: {}", name, ::strerror(errno)));
  }
  Subprocess child;
  child.keeper_ = keeper;
  child.isolation_ = options.isolation;
  child.status_fd_ = status_pipe[0];
  child.in_fd_ = mine[0];
  child.out_fd_ = mine[1];
  child.err_fd_ = mine[2];
  int exec_error = 0;
  bool failed = read_exact(error_pipe[0], &exec_error, sizeof exec_error);
  ::close(error_pipe[0]);
  if (!read_exact(child.status_fd_, &child.pid_, sizeof child.pid_)) {
    child.pid_ = -1;
    failed = true;
  }
  if (failed) {
    child.wait();
    if (exec_error < 0) {
      throw Error(fmt::format("cannot run '{}' in {}: {}", name, describe(options.isolation),
                              ::strerror(-exec_error)));
    }
    throw Error(fmt::format("cannot run '{}': {}", name,
                            exec_error != 0 ? ::strerror(exec_error) : "the keeper process died"));
  }
  ::fcntl(child.status_fd_, F_SETFL, O_NONBLOCK);
  return child;
}

Subprocess::Subprocess(Subprocess&& other) noexcept
    : keeper_(std::exchange(other.keeper_, -1)),
      pid_(std::exchange(other.pid_, -1)),
      isolation_(other.isolation_),
      status_fd_(std::exchange(other.status_fd_, -1)),
      in_fd_(std::exchange(other.in_fd_, -1)),
      out_fd_(std::exchange(other.out_fd_, -1)),
      err_fd_(std::exchange(other.err_fd_, -1)),
      status_(std::exchange(other.status_, std::nullopt)) {}

Subprocess& Subprocess::operator=(Subprocess&& other) noexcept {
  if (this != &other) {
    release();
    keeper_ = std::exchange(other.keeper_, -1);
    pid_ = std::exchange(other.pid_, -1);
    isolation_ = other.isolation_;
    status_fd_ = std::exchange(other.status_fd_, -1);
    in_fd_ = std::exchange(other.in_fd_, -1);
    out_fd_ = std::exchange(other.out_fd_, -1);
    err_fd_ = std::exchange(other.err_fd_, -1);
    status_ = std::exchange(other.status_, std::nullopt);
  }
  return *this;
}

Subprocess::~Subprocess() {
  release();
}

void Subprocess::release() {
  if (keeper_ > 0 && !status_) {
    send_signal(SIGKILL);
    wait();
  }
  for (int* fd : {&status_fd_, &in_fd_, &out_fd_, &err_fd_}) {
    if (*fd >= 0) {
      ::close(*fd);
      *fd = -1;
    }
  }
  keeper_ = -1;
}

void Subprocess::close_stdin() {
  if (in_fd_ >= 0) {
    ::close(in_fd_);
    in_fd_ = -1;
  }
}

void Subprocess::send_signal(int signal) {
  if (pid_ > 0 && !status_) {
    ::kill(isolation_ == Isolation::process_group ? -pid_ : pid_, signal);
  }
}

std::optional<ExitStatus> Subprocess::try_wait() {
  return read_status(false);
}

ExitStatus Subprocess::wait() {
  return *read_status(true);
}

std::optional<ExitStatus> Subprocess::read_status(bool block) {
  if (status_ || keeper_ <= 0) {
    return status_;
  }
  if (block) {
    pollfd pfd{status_fd_, POLLIN, 0};
    while (::poll(&pfd, 1, -1) < 0 && errno == EINTR) {
    }
  }
  int status = 0;
  ssize_t n = ::read(status_fd_, &status, sizeof status);
  if (n < 0 && (errno == EAGAIN || errno == EINTR)) {
    return std::nullopt;
  }
  // A short read or EOF means the keeper itself died (killed from outside): report SIGKILL.
  status_ = n == sizeof status ? from_wait_status(status) : ExitStatus{std::nullopt, SIGKILL};
  while (::waitpid(keeper_, nullptr, 0) < 0 && errno == EINTR) {
  }
  return status_;
}

std::string describe(Isolation isolation) {
  switch (isolation) {
    case Isolation::pid_namespace:
      return "a PID namespace";
    case Isolation::user_pid_namespace:
      return "a user and PID namespace";
    case Isolation::process_group:
      break;
  }
  return "a process group";
}

namespace {

// Whether a child can enter `isolation` and fork its PID 1 there.
bool isolation_works(Isolation isolation) {
  Prepared p;
  p.isolation = isolation;
  p.uid_map = fmt::format("{0} {0} 1", ::getuid());
  p.gid_map = fmt::format("{0} {0} 1", ::getgid());
  pid_t prober = ::fork();
  if (prober == 0) {
    if (enter_namespace(p) != 0) {
      ::_exit(1);
    }
    pid_t init = ::fork();
    if (init == 0) {
      ::_exit(::getpid() == 1 ? 0 : 1);
    }
    int status = 0;
    bool ok = init > 0 && ::waitpid(init, &status, 0) == init && WIFEXITED(status)
              && WEXITSTATUS(status) == 0;
    ::_exit(ok ? 0 : 1);
  }
  int status = 0;
  if (prober < 0) {
    return false;
  }
  while (::waitpid(prober, &status, 0) < 0 && errno == EINTR) {
  }
  return WIFEXITED(status) && WEXITSTATUS(status) == 0;
}

}  // namespace

Isolation probe_isolation() {
  for (Isolation i : {Isolation::pid_namespace, Isolation::user_pid_namespace}) {
    if (isolation_works(i)) {
      return i;
    }
  }
  return Isolation::process_group;
}

}  // namespace zerodrop
