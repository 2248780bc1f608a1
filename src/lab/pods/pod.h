#pragma once

#include <signal.h>

#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "base/duration.h"
#include "base/subprocess.h"
#include "kube/kubelet.h"
#include "lab/pods/container_runtime.h"
#include "lab/pods/spec.h"
#include "record/run_record.h"

namespace boost::asio {
class io_context;
}  // namespace boost::asio

namespace zerodrop::lab {

class Recorder;
class ProcessWatch;
class ContainerRuntime;

// A pod run as a container of an image (lab -f without a command), as kubelet would run it.
struct ContainerSpec {
  RuntimeKind runtime_kind = RuntimeKind::podman;
  std::string image;
  std::vector<std::string> command;  // the manifest's command and args; empty: the image's
  std::vector<std::string> args;
  std::optional<int64_t> user;  // securityContext.runAsUser
  // Whether the image's STOPSIGNAL applies: neither the manifest nor --stop-signal set one.
  bool image_stop_signal = true;
  const ContainerRuntime* runtime = nullptr;  // set by the lab (bind_container) before it runs
};

// What every pod of the workload runs and how kubelet treats it.
struct PodSpec {
  std::vector<std::string> command;  // {port}, {ip}, {name} are replaced
  // Set on top of PORT, POD_IP and POD_NAME (the manifest's env, the database's PG* variables).
  std::vector<std::pair<std::string, std::string>> env;
  std::string version;  // "A" or "B" when the lab rolls one version to another
  uint16_t port = 0;    // 0 = each pod gets its own free port
  HookSpec prestop;
  Duration grace = std::chrono::seconds(30);
  int stop_signal = SIGTERM;
  ProbeSpec readiness;
  ProbeSpec liveness;
  Duration minimum_stop_grace = kube::kMinimumStopGrace;  // kubelet's 2 s; tests may not change it
  Duration restart_backoff = std::chrono::seconds(1);     // first restart delay, doubled up to 10 s
  // PID 1 of its own PID namespace (as in a container) or a process group (see Isolation).
  Isolation isolation = Isolation::process_group;
  ProcessWatch* processes = nullptr;  // when set, records every exit of the pod's processes
  // Set: `command` runs in a container of this image (exec hooks and probes inside it, signals
  // through the runtime); `isolation` is then the runtime's own.
  std::optional<ContainerSpec> container;
};

// One pod: its process, its probes and kubelet's termination sequence. Lives on the control
// io_context's thread: every method must be called there. Records every step through the
// Recorder and calls `on_change` after each change of ready / terminating / gone.
class Pod {
public:
  Pod(boost::asio::io_context& io, Recorder& recorder, const PodSpec& spec, std::string name,
      std::string ip, int revision, std::function<void()> on_change);
  ~Pod();
  Pod(const Pod&) = delete;
  Pod& operator=(const Pod&) = delete;

  // Spawns the process and starts the probes. Throws Error when the command cannot run.
  void start();
  // Kubelet's graceful deletion: preStop (counted against grace), stop signal, SIGKILL after
  // max(2 s, grace - whole seconds of preStop). Idempotent.
  void delete_pod();
  // The end of the run: SIGKILL now and reap (recorded). Blocks only for the reap.
  void kill_now(const std::string& why);

  const std::string& name() const;
  const std::string& ip() const;
  uint16_t port() const;
  int revision() const;
  bool ready() const;
  bool terminating() const;
  bool gone() const;  // terminating and its process has exited: the pod object is deleted
  // When it last became ready (recorder time), for minReadySeconds.
  std::optional<record::Micros> ready_since() const;

private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

}  // namespace zerodrop::lab
