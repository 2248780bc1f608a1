#include "shim/child.h"

#include <fcntl.h>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <csignal>
#include <cstring>

#include <fmt/format.h>

#include "base/error.h"

namespace zerodrop::shim {
namespace {

// Runs in the forked child: only async-signal-safe calls until exec.
[[noreturn]] void exec_child(char* const* argv, pid_t parent, int error_fd) {
  ::setpgid(0, 0);
  ::prctl(PR_SET_PDEATHSIG, SIGKILL);
  if (::getppid() != parent) {
    ::_exit(137);  // zerodrop died between fork and prctl
  }

  struct sigaction dfl {};

  dfl.sa_handler = SIG_DFL;
  for (int s = 1; s < NSIG; ++s) {
    ::sigaction(s, &dfl, nullptr);  // Asio's handlers must not run in the app
  }
  sigset_t none;
  sigemptyset(&none);
  ::sigprocmask(SIG_SETMASK, &none, nullptr);
  ::execvp(argv[0], argv);
  int error = errno;
  ssize_t ignored = ::write(error_fd, &error, sizeof error);
  (void)ignored;
  ::_exit(127);
}

int exit_code_of(int status) {
  if (WIFSIGNALED(status)) {
    return 128 + WTERMSIG(status);
  }
  return WEXITSTATUS(status);
}

}  // namespace

Child Child::spawn(const std::vector<std::string>& args) {
  if (args.empty()) {
    throw Error("no command to run; usage: zerodrop run [options] -- APP ARGS...");
  }
  std::vector<char*> argv;
  for (const std::string& a : args) {
    argv.push_back(const_cast<char*>(a.c_str()));
  }
  argv.push_back(nullptr);
  int error_pipe[2];
  if (::pipe2(error_pipe, O_CLOEXEC) != 0) {
    throw Error(fmt::format("cannot run '{}': pipe: {}", args[0], std::strerror(errno)));
  }
  // Block every signal across fork so no handler of ours runs in the child before exec.
  sigset_t all;
  sigset_t old;
  sigfillset(&all);
  ::sigprocmask(SIG_SETMASK, &all, &old);
  pid_t parent = ::getpid();
  pid_t pid = ::fork();
  if (pid == 0) {
    ::close(error_pipe[0]);
    exec_child(argv.data(), parent, error_pipe[1]);
  }
  ::sigprocmask(SIG_SETMASK, &old, nullptr);
  ::close(error_pipe[1]);
  if (pid < 0) {
    ::close(error_pipe[0]);
    throw Error(fmt::format("cannot run '{}': fork: {}", args[0], std::strerror(errno)));
  }
  ::setpgid(pid, pid);  // also from the parent, so the group exists before we signal it
  int error = 0;
  ssize_t n = ::read(error_pipe[0], &error, sizeof error);
  ::close(error_pipe[0]);
  if (n == sizeof error) {
    ::waitpid(pid, nullptr, 0);
    throw Error(fmt::format("cannot run '{}': {}", args[0], std::strerror(error)));
  }
  return Child(pid);
}

void Child::signal_group(int signal) const {
  if (exit_code_) {
    return;
  }
  if (::kill(-pid_, signal) != 0) {
    ::kill(pid_, signal);  // the app left its group (setsid): reach it at least
  }
}

std::optional<int> Child::reap() {
  for (;;) {
    int status = 0;
    pid_t pid = ::waitpid(-1, &status, WNOHANG);
    if (pid <= 0) {
      break;
    }
    if (pid == pid_) {
      exit_code_ = exit_code_of(status);
    }
  }
  return exit_code_;
}

void become_subreaper() {
  if (::getpid() != 1) {
    ::prctl(PR_SET_CHILD_SUBREAPER, 1);
  }
}

}  // namespace zerodrop::shim
