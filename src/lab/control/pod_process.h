#pragma once

#include <chrono>
#include <optional>
#include <string>

#include <nlohmann/json.hpp>

#include "base/duration.h"
#include "base/subprocess.h"
#include "kubeapi/objects.h"

namespace zerodrop::lab {

// This zerodrop binary (/proc/self/exe): the image's "/zerodrop" of a pod the lab runs.
std::string self_binary();

// A pod's container run as kubelet would run it, as a process on this host: the pod's command
// and args with $(VAR) expanded, its env (the downward API, HOSTNAME, and the service links of
// `services` as seen from `node`: each Service's address on that node is that node's router), a
// command "/zerodrop" or "zerodrop" run as this zerodrop, stdout and stderr to `log`. Shared by
// the Jobs' and the DaemonSets' pods. The process is killed when this object goes.
class PodProcess {
public:
  // Starts the first container of `pod` (its API object). Throws Error when it cannot run (no
  // command, an executable that cannot be run, a log that cannot be opened).
  static PodProcess start(const nlohmann::json& pod, const std::vector<nlohmann::json>& services,
                          const kubeapi::Node& node, const std::string& log);

  // Kubelet's stop: SIGTERM now, SIGKILL once `grace` has passed (at a later poll()). Does
  // nothing once it has exited or is already stopping.
  void stop(Duration grace);
  // SIGKILL when the grace period has passed; the exit status once it has exited (reaped once:
  // later calls return nothing).
  std::optional<ExitStatus> poll();

  bool exited() const { return process_.exited(); }

private:
  explicit PodProcess(Subprocess process) : process_(std::move(process)) {}

  Subprocess process_;
  std::optional<std::chrono::steady_clock::time_point> kill_at_;
};

}  // namespace zerodrop::lab
