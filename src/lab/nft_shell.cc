#include "lab/nft_shell.h"

#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <spawn.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>

#include <fmt/format.h>

#include "base/error.h"
#include "lab/router.h"

extern char** environ;

namespace zerodrop::lab {
namespace {

// What nft prints for the marker command, last: the end of its answer.
constexpr std::string_view kMarkerEnd = "16 bits\n";
constexpr int kAnswerMs = 30'000;  // a machine stalled this long has bigger problems

bool write_all(int fd, const std::string& text) {
  for (size_t done = 0; done < text.size();) {
    ssize_t n = ::write(fd, text.data() + done, text.size() - done);
    if (n < 0 && errno == EINTR) {
      continue;
    }
    if (n <= 0) {
      return false;
    }
    done += static_cast<size_t>(n);
  }
  return true;
}

// Whatever `fd` (non-blocking) holds now.
std::string read_available(int fd) {
  std::string text;
  char buffer[4096];
  for (ssize_t n; (n = ::read(fd, buffer, sizeof buffer)) > 0;) {
    text.append(buffer, static_cast<size_t>(n));
  }
  return text;
}

}  // namespace

NftShell::NftShell() {
  int in[2], out[2], err[2];
  if (::pipe2(in, O_CLOEXEC) != 0 || ::pipe2(out, O_CLOEXEC) != 0 || ::pipe2(err, O_CLOEXEC) != 0) {
    throw Error(
        fmt::format("{}: pipe: {}", dataplane_flag(Dataplane::nftables), std::strerror(errno)));
  }
  posix_spawn_file_actions_t actions;
  posix_spawn_file_actions_init(&actions);
  posix_spawn_file_actions_adddup2(&actions, in[0], 0);
  posix_spawn_file_actions_adddup2(&actions, out[1], 1);
  posix_spawn_file_actions_adddup2(&actions, err[1], 2);
  char nft[] = "nft";
  char interactive[] = "-i";
  char* argv[] = {nft, interactive, nullptr};
  int spawned = posix_spawnp(&pid_, "nft", &actions, nullptr, argv, environ);
  posix_spawn_file_actions_destroy(&actions);
  ::close(in[0]);
  ::close(out[1]);
  ::close(err[1]);
  in_ = in[1];
  out_ = out[0];
  err_ = err[0];
  ::fcntl(err_, F_SETFL, O_NONBLOCK);
  if (spawned != 0) {
    pid_ = -1;
    throw Error(fmt::format("{} needs nft ({}); apt install nftables",
                            dataplane_flag(Dataplane::nftables), std::strerror(spawned)));
  }
}

NftShell::~NftShell() {
  ::close(in_);  // nft exits at the end of its input
  ::close(out_);
  ::close(err_);
  if (pid_ > 0) {
    while (::waitpid(pid_, nullptr, 0) < 0 && errno == EINTR) {
    }
  }
}

std::string NftShell::commit(const std::string& script) {
  std::string line;
  for (char c : script) {
    line += c == '\n' ? ';' : c;
  }
  if (!write_all(in_, line + "\ndescribe tcp dport\n")) {
    return "nft is gone (its input is closed)";
  }
  std::string answer;
  while (answer.size() < kMarkerEnd.size()
         || answer.compare(answer.size() - kMarkerEnd.size(), kMarkerEnd.size(), kMarkerEnd) != 0) {
    pollfd p{out_, POLLIN, 0};
    int ready = ::poll(&p, 1, kAnswerMs);
    if (ready < 0 && errno == EINTR) {
      continue;
    }
    char buffer[4096];
    ssize_t n = ready > 0 ? ::read(out_, buffer, sizeof buffer) : -1;
    if (n <= 0) {
      return ready == 0 ? "nft did not answer within 30 s" : "nft exited";
    }
    answer.append(buffer, static_cast<size_t>(n));
  }
  std::string error = read_available(err_);
  while (!error.empty() && error.back() == '\n') {
    error.pop_back();
  }
  return error;
}

}  // namespace zerodrop::lab
