#include "lab/kernel/nft_shell.h"

#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>

#include <fmt/format.h>

#include "base/error.h"
#include "lab/routers/router.h"

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

Subprocess start_nft() {
  try {
    return Subprocess::spawn({.argv = {"nft", "-i"}, .pipes = Pipes::in | Pipes::out | Pipes::err});
  } catch (const Error& e) {
    throw Error(fmt::format("{} needs nft ({}); apt install nftables",
                            dataplane_flag(Dataplane::nftables), e.what()));
  }
}

}  // namespace

NftShell::NftShell() : nft_(start_nft()) {
  ::fcntl(nft_.stderr_fd(), F_SETFL, O_NONBLOCK);
}

NftShell::~NftShell() {
  nft_.close_stdin();  // nft exits at the end of its input
  nft_.wait();
}

std::string NftShell::commit(const std::string& script) {
  std::string line;
  for (char c : script) {
    line += c == '\n' ? ';' : c;
  }
  if (!write_all(nft_.stdin_fd(), line + "\ndescribe tcp dport\n")) {
    return "nft is gone (its input is closed)";
  }
  std::string answer;
  while (answer.size() < kMarkerEnd.size()
         || answer.compare(answer.size() - kMarkerEnd.size(), kMarkerEnd.size(), kMarkerEnd) != 0) {
    pollfd p{nft_.stdout_fd(), POLLIN, 0};
    int ready = ::poll(&p, 1, kAnswerMs);
    if (ready < 0 && errno == EINTR) {
      continue;
    }
    char buffer[4096];
    ssize_t n = ready > 0 ? ::read(nft_.stdout_fd(), buffer, sizeof buffer) : -1;
    if (n <= 0) {
      return ready == 0 ? "nft did not answer within 30 s" : "nft exited";
    }
    answer.append(buffer, static_cast<size_t>(n));
  }
  std::string error = read_available(nft_.stderr_fd());
  while (!error.empty() && error.back() == '\n') {
    error.pop_back();
  }
  return error;
}

}  // namespace zerodrop::lab
