#include "verify/kubectl_proxy.h"

#include <signal.h>
#include <stdlib.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <thread>

#include <boost/asio/io_context.hpp>
#include <boost/asio/local/stream_protocol.hpp>
#include <fmt/format.h>

#include "base/duration.h"
#include "base/error.h"

namespace zerodrop::verify {
namespace {

namespace fs = std::filesystem;

// mkdtemp creates the folder 0700: only this user can reach the socket inside, which carries
// the user's full credentials.
std::string make_private_folder() {
  const char* tmp = std::getenv("TMPDIR");
  std::string pattern = fmt::format("{}/zerodrop-verify.XXXXXX", tmp && *tmp ? tmp : "/tmp");
  if (::mkdtemp(pattern.data()) == nullptr) {
    throw Error(fmt::format("cannot create a private folder for kubectl proxy under {}: {}",
                            tmp && *tmp ? tmp : "/tmp", std::strerror(errno)));
  }
  return pattern;
}

std::vector<std::string> proxy_argv(const KubectlOptions& options, const std::string& socket) {
  std::vector<std::string> argv{options.kubectl};
  if (!options.kubeconfig.empty()) {
    argv.push_back("--kubeconfig=" + options.kubeconfig);
  }
  if (!options.context.empty()) {
    argv.push_back("--context=" + options.context);
  }
  argv.push_back("proxy");
  argv.push_back("--unix-socket=" + socket);
  return argv;
}

bool answers(const std::string& socket) {
  boost::asio::io_context io;
  boost::asio::local::stream_protocol::socket s(io);
  boost::system::error_code ec;
  s.connect(boost::asio::local::stream_protocol::endpoint(socket), ec);
  return !ec;
}

bool executable(const fs::path& path) {
  return ::access(path.c_str(), X_OK) == 0 && !fs::is_directory(path);
}

std::optional<std::string> search_path(const std::string& name) {
  if (name.find('/') != std::string::npos) {
    return executable(name) ? std::optional(name) : std::nullopt;
  }
  const char* path = std::getenv("PATH");
  std::istringstream dirs(path ? path : "");
  for (std::string dir; std::getline(dirs, dir, ':');) {
    fs::path candidate = fs::path(dir.empty() ? "." : dir) / name;
    if (executable(candidate)) {
      return candidate.string();
    }
  }
  return std::nullopt;
}

}  // namespace

std::string find_kubectl(const std::string& flag) {
  const char* env = std::getenv("KUBECTL_PATH");
  std::string wanted = !flag.empty() ? flag : env && *env ? env : "kubectl";
  if (auto found = search_path(wanted)) {
    return *found;
  }
  throw Error(
      fmt::format("kubectl not found ('{}'): install it (Debian: apt-get install "
                  "kubernetes-client) or name it with --kubectl PATH",
                  wanted));
}

KubectlProxy::KubectlProxy(const KubectlOptions& options)
    : folder_(make_private_folder()),
      socket_(folder_ + "/kube.sock"),
      log_(folder_ + "/kubectl.log"),
      child_(Subprocess::spawn({proxy_argv(options, socket_), {}, log_, log_})) {
  try {
    auto deadline = std::chrono::steady_clock::now() + options.start_timeout;
    while (!(fs::exists(socket_) && answers(socket_))) {
      if (auto status = child_.try_wait()) {
        throw Error(fmt::format("kubectl proxy exited ({}): {}", status->describe(), last_error()));
      }
      if (std::chrono::steady_clock::now() > deadline) {
        throw Error(fmt::format("kubectl proxy did not open its socket within {}: {}",
                                format_duration(options.start_timeout), last_error()));
      }
      std::this_thread::sleep_for(std::chrono::milliseconds(20));
    }
  } catch (...) {
    child_.send_signal(SIGKILL);
    child_.wait();
    std::error_code ec;
    fs::remove_all(folder_, ec);
    throw;
  }
}

KubectlProxy::~KubectlProxy() {
  if (!child_.exited()) {
    child_.send_signal(SIGKILL);
    child_.wait();
  }
  std::error_code ec;
  fs::remove_all(folder_, ec);
}

bool KubectlProxy::running() {
  return !child_.try_wait().has_value();
}

std::string KubectlProxy::last_error() const {
  std::ifstream in(log_);
  std::string line, last;
  while (std::getline(in, line)) {
    if (!line.empty() && line.find("Starting to serve") == std::string::npos) {
      last = line;
    }
  }
  return last.empty() ? std::string("(no output)") : last;
}

}  // namespace zerodrop::verify
