#include "lab/control/pod_process.h"

#include <unistd.h>

#include <climits>
#include <csignal>
#include <utility>
#include <vector>

#include "kubeapi/jobs.h"

namespace zerodrop::lab {

std::string self_binary() {
  char path[PATH_MAX];
  ssize_t n = ::readlink("/proc/self/exe", path, sizeof path - 1);
  return n > 0 ? std::string(path, static_cast<size_t>(n)) : "zerodrop";
}

PodProcess PodProcess::start(const nlohmann::json& pod, const std::vector<nlohmann::json>& services,
                             const kubeapi::Node& node, const std::string& log) {
  std::vector<std::pair<std::string, std::string>> env = kubeapi::job_pod_env(pod, services, node);
  env.emplace_back("HOSTNAME", pod["metadata"].value("name", ""));
  SpawnOptions spawn;
  spawn.stdout_path = log;
  spawn.stderr_path = log;
  spawn.argv = kubeapi::container_argv(pod["spec"]["containers"][0], env);
  if (spawn.argv[0] == "/zerodrop" || spawn.argv[0] == "zerodrop") {
    spawn.argv[0] = self_binary();  // the agent image's binary is this zerodrop
  }
  spawn.env = std::move(env);
  return PodProcess(Subprocess::spawn(spawn));
}

void PodProcess::stop(Duration grace) {
  if (process_.exited() || kill_at_) {
    return;
  }
  process_.send_signal(SIGTERM);
  kill_at_ = std::chrono::steady_clock::now() + grace;
}

std::optional<ExitStatus> PodProcess::poll() {
  if (kill_at_ && std::chrono::steady_clock::now() >= *kill_at_) {
    process_.send_signal(SIGKILL);
    kill_at_.reset();
  }
  return process_.try_wait();
}

}  // namespace zerodrop::lab
