// run_captured() (subprocess.h): a command run to its end through Subprocess's pipes.
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <unistd.h>

#include <cerrno>
#include <string>
#include <string_view>

#include "base/subprocess.h"

namespace zerodrop {

Captured run_captured(SpawnOptions options, std::string_view input) {
  options.pipes = Pipes::in | Pipes::out | Pipes::err;
  Subprocess child = Subprocess::spawn(options);
  Captured captured;
  // One poll loop over stdin, stdout and stderr: a child that prints much before it reads all
  // its input (or the other way round) never waits on this process.
  size_t written = 0;
  if (input.empty()) {
    child.close_stdin();
  } else {
    ::fcntl(child.stdin_fd(), F_SETFL, O_NONBLOCK);
  }
  std::string* sinks[] = {&captured.out, &captured.err};
  int fds[] = {child.stdout_fd(), child.stderr_fd()};
  while (fds[0] >= 0 || fds[1] >= 0) {
    pollfd p[3] = {{fds[0], POLLIN, 0}, {fds[1], POLLIN, 0}, {child.stdin_fd(), POLLOUT, 0}};
    if (::poll(p, 3, -1) < 0) {
      if (errno == EINTR) {
        continue;
      }
      break;
    }
    if (p[2].revents != 0) {
      // MSG_NOSIGNAL exists for sockets only: a child that exits without reading its input
      // must not kill this process with SIGPIPE, so SIGPIPE is blocked around the write.
      sigset_t pipe_signal, old;
      sigemptyset(&pipe_signal);
      sigaddset(&pipe_signal, SIGPIPE);
      ::pthread_sigmask(SIG_BLOCK, &pipe_signal, &old);
      ssize_t n = ::write(child.stdin_fd(), input.data() + written, input.size() - written);
      if (n < 0 && errno == EPIPE) {
        timespec now{0, 0};
        while (::sigtimedwait(&pipe_signal, nullptr, &now) > 0) {
        }
      }
      ::pthread_sigmask(SIG_SETMASK, &old, nullptr);
      written += n > 0 ? static_cast<size_t>(n) : 0;
      if (n < 0 && errno != EAGAIN && errno != EINTR) {
        written = input.size();  // the child closed its input: the rest is not wanted
      }
      if (written == input.size()) {
        child.close_stdin();
      }
    }
    for (int i = 0; i < 2; ++i) {
      if (fds[i] >= 0 && p[i].revents != 0) {
        char buffer[4096];
        ssize_t n = ::read(fds[i], buffer, sizeof buffer);
        if (n > 0) {
          sinks[i]->append(buffer, static_cast<size_t>(n));
        } else if (n == 0 || errno != EINTR) {
          fds[i] = -1;  // end of file: the child and its children closed that stream
        }
      }
    }
  }
  child.close_stdin();
  captured.status = child.wait();
  return captured;
}

}  // namespace zerodrop
