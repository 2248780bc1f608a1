#include "lab/control/daemon_runner.h"

#include <algorithm>
#include <set>

#include <fmt/format.h>

#include "base/error.h"
#include "kubeapi/admission.h"
#include "kubeapi/jobs.h"
#include "kubeapi/store.h"
#include "lab/recording/recorder.h"

namespace zerodrop::lab {

using nlohmann::json;
using SteadyTime = std::chrono::steady_clock::time_point;

namespace {

constexpr const char* kDaemonSets = "apps/daemonsets";
constexpr const char* kDaemonPods = "pods";

// kubelet's crash back-off: 10 s after the first exit, doubling, at most 5 min.
Duration back_off(int restarts) {
  auto delay = std::chrono::seconds(10) * (1 << std::min(restarts, 5));
  return std::min<Duration>(delay, std::chrono::minutes(5));
}

}  // namespace

DaemonRunner::DaemonRunner(kubeapi::Store& store, kubeapi::ClusterInfo info, Recorder& recorder)
    : store_(store), info_(std::move(info)), recorder_(recorder) {}

DaemonRunner::~DaemonRunner() = default;

bool DaemonRunner::delete_pod(const std::string& name) {
  auto it = pods_.find(name);
  if (it == pods_.end()) {
    return false;
  }
  kill(*it->second, "a client deleted it");
  return true;
}

void DaemonRunner::poll() {
  for (auto& [name, pod] : pods_) {
    reap(*pod);
  }
  reconcile();
  for (auto it = pods_.begin(); it != pods_.end();) {
    it = it->second->gone ? pods_.erase(it) : std::next(it);
  }
}

const kubeapi::Node* DaemonRunner::node_named(const std::string& name) const {
  auto it = std::find_if(info_.nodes.begin(), info_.nodes.end(),
                         [&](const kubeapi::Node& n) { return n.name == name; });
  return it == info_.nodes.end() ? nullptr : &*it;
}

// kubelet: a container that exited waits out its back-off and starts again (restartPolicy
// Always); a deleted pod's object goes once its container has stopped.
void DaemonRunner::reap(Pod& pod) {
  if (pod.process) {
    if (std::optional<ExitStatus> status = pod.process->poll()) {
      kubeapi::DaemonPod& s = pod.state;
      s.exited = std::chrono::system_clock::now();
      s.exited_started = s.started;
      s.exit_code = status->exit_code;
      s.signal = status->signal;
      s.started.reset();
      pod.process.reset();
      recorder_.pod_event(
          record::EventKind::note, "",
          fmt::format("daemonset pod {} on {}: {}", s.name, s.node, status->describe()));
      if (!s.deletion) {
        Duration delay = back_off(s.restarts);
        s.waiting = "CrashLoopBackOff";
        s.waiting_message = fmt::format("back-off {}s restarting failed container",
                                        std::chrono::ceil<std::chrono::seconds>(delay).count());
        pod.restart_at = std::chrono::steady_clock::now() + delay;
      }
      put(pod);
    }
  }
  if (pod.restart_at && !pod.state.deletion
      && std::chrono::steady_clock::now() >= *pod.restart_at) {
    pod.restart_at.reset();
    ++pod.state.restarts;
    start(pod);
  }
  if (pod.state.deletion && !pod.process && !pod.gone) {
    store_.erase(kDaemonPods, pod.state.name);
    pod.gone = true;
  }
}

void DaemonRunner::reconcile() {
  if (store_.resource_version() == seen_rv_) {
    return;
  }
  std::set<std::string> live;
  for (const json& ds : store_.list(kDaemonSets).items) {
    live.insert(ds["metadata"].value("uid", ""));
    try {
      reconcile_one(ds);
    } catch (const std::exception& e) {  // a stored DaemonSet the lab cannot read: said, skipped
      recorder_.pod_event(
          record::EventKind::note, "",
          fmt::format("daemonset {}: {}", ds["metadata"].value("name", ""), e.what()));
    }
  }
  for (auto& [name, pod] : pods_) {
    if (live.count(pod->owner_uid) == 0) {
      kill(*pod, "its daemonset is gone");
    }
  }
  seen_rv_ = store_.resource_version();
}

// The DaemonSet controller's step for one DaemonSet: a pod on each node it admits, none of an
// older template (replaced node by node: the new pod once the old one is gone), none elsewhere;
// then its status.
void DaemonRunner::reconcile_one(const json& ds) {
  std::string uid = ds["metadata"].value("uid", "");
  std::string name = ds["metadata"].value("name", "");
  std::string hash = kubeapi::revision_hash(ds);
  std::vector<kubeapi::Node> admitted = kubeapi::daemon_nodes(ds, info_.nodes);
  for (const kubeapi::Node& node : info_.nodes) {
    bool wanted = std::any_of(admitted.begin(), admitted.end(),
                              [&](const kubeapi::Node& n) { return n.name == node.name; });
    bool any = false;
    for (auto& [pod_name, pod] : pods_) {
      if (pod->owner_uid != uid || pod->state.node != node.name || pod->gone) {
        continue;
      }
      any = true;
      if (!wanted) {
        kill(*pod, "its node no longer fits the daemonset's template");
      } else if (pod->state.hash != hash) {
        kill(*pod, "the daemonset's template changed");
      }
    }
    if (wanted && !any) {
      make_pod(ds, node);
    }
  }
  std::vector<kubeapi::DaemonPod> states;
  for (auto& [pod_name, pod] : pods_) {
    if (pod->owner_uid == uid && !pod->gone) {
      states.push_back(pod->state);
    }
  }
  json status = kubeapi::daemon_set_status(ds, states, static_cast<int>(admitted.size()));
  if (ds.value("status", json()) != status) {
    store_.update(kDaemonSets, name, [&](json& object) {
      if (object["metadata"].value("uid", "") != uid) {
        return false;
      }
      object["status"] = status;
      return true;
    });
  }
}

void DaemonRunner::make_pod(const json& ds, const kubeapi::Node& node) {
  auto pod = std::make_unique<Pod>();
  std::string name;
  do {
    name =
        kubeapi::admitted_name({{"generateName", ds["metadata"].value("name", "") + "-"}}, "Pod");
  } while (pods_.count(name) > 0 || store_.get(kDaemonPods, name));
  pod->state.name = name;
  pod->state.node = node.name;
  pod->state.hash = kubeapi::revision_hash(ds);
  pod->state.created = std::chrono::system_clock::now();
  pod->state.grace = std::chrono::seconds(
      ds["spec"]["template"]["spec"].value("terminationGracePeriodSeconds", int64_t{30}));
  pod->owner_uid = ds["metadata"].value("uid", "");
  pod->daemon_set = ds;
  Pod& made = *pod;
  pods_[name] = std::move(pod);
  start(made);
}

// kubelet starts the container: the pod's command with the node's view of the Services.
void DaemonRunner::start(Pod& pod) {
  const kubeapi::Node* node = node_named(pod.state.node);
  json object = kubeapi::daemon_pod_object(pod.daemon_set, pod.state);
  try {
    if (node == nullptr) {
      throw Error("node " + pod.state.node + " is not in the lab");
    }
    pod.process.emplace(PodProcess::start(object, store_.list("services").items, *node,
                                          recorder_.pod_log(pod.state.name)));
    pod.state.started = std::chrono::system_clock::now();
    pod.state.waiting.clear();
    pod.state.waiting_message.clear();
    recorder_.pod_event(
        record::EventKind::note, "",
        fmt::format("daemonset {} runs pod {} on {}", pod.daemon_set["metadata"].value("name", ""),
                    pod.state.name, pod.state.node));
  } catch (const std::exception& e) {
    // The runtime's RunContainerError: tried again after the back-off.
    pod.state.waiting = "RunContainerError";
    pod.state.waiting_message = e.what();
    pod.restart_at = std::chrono::steady_clock::now() + back_off(pod.state.restarts);
    recorder_.pod_event(record::EventKind::note, "",
                        fmt::format("daemonset pod {} cannot run: {}", pod.state.name, e.what()));
  }
  put(pod);
}

// Kubelet's deletion: the stop signal now, SIGKILL after the grace period.
void DaemonRunner::kill(Pod& pod, const std::string& why) {
  if (pod.state.deletion || pod.gone) {
    return;
  }
  pod.state.deletion = std::chrono::system_clock::now();
  pod.restart_at.reset();
  recorder_.pod_event(
      record::EventKind::note, "",
      fmt::format("daemonset pod {} on {} deleted: {}", pod.state.name, pod.state.node, why));
  if (pod.process) {
    pod.process->stop(pod.state.grace);
  }
  put(pod);
}

void DaemonRunner::put(const Pod& pod) {
  if (!pod.gone) {
    store_.put(kDaemonPods, kubeapi::daemon_pod_object(pod.daemon_set, pod.state));
  }
}

}  // namespace zerodrop::lab
