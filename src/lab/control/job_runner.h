#pragma once

#include <chrono>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "kubeapi/jobs.h"
#include "kubeapi/objects.h"
#include "lab/control/pod_process.h"

namespace zerodrop::kubeapi {
class Store;
}  // namespace zerodrop::kubeapi

namespace zerodrop::lab {

class Recorder;

// The job controller and kubelet of the lab's API for batch/v1 Jobs that clients create: makes
// each Job's pods (Indexed or not, `parallelism` at a time, retried up to backoffLimit, stopped at
// activeDeadlineSeconds), schedules them on the emulated nodes (nodeName, nodeSelector, required
// pod anti-affinity on the hostname), and runs each pod's command as a process on this host with
// its node's view of the Services: SVC_SERVICE_HOST/_PORT name that node's router, so the pod's
// traffic goes through it as the lab's own load does. stdout and stderr are the pod's log. A
// command "/zerodrop" or "zerodrop" (the image's binary) runs this zerodrop. Pods and Jobs are
// kept in the store with their status. Control thread only.
class JobRunner {
public:
  JobRunner(kubeapi::Store& store, kubeapi::ClusterInfo info, Recorder& recorder);
  ~JobRunner();  // kills every pod still running (the lab ends)
  JobRunner(const JobRunner&) = delete;
  JobRunner& operator=(const JobRunner&) = delete;

  // The stored Job `name` was created: its pods start at the next poll().
  void create(const std::string& name);
  // The Job was deleted with `propagation` (Background, Foreground, Orphan) by `who` (said in
  // the record).
  void remove(const std::string& name, const std::string& propagation,
              const std::string& who = "a client");
  // Deletes `pod` as kubelet would (SIGTERM, SIGKILL after its grace) when it is a Job's pod;
  // false when it is not one.
  bool delete_pod(const std::string& pod);
  // Reaps exited pods, kills those past their grace, makes, schedules and starts pods, and
  // stores every status that changed. Call it often (every loop of the lab's control thread).
  void poll();

private:
  struct Pod {
    kubeapi::JobPod state;
    nlohmann::json job;  // its Job as created: the pod's template, also after an orphaning
    std::optional<PodProcess> process;
    bool gone = false;  // deleted and exited: no longer in the store
  };

  struct Job {
    std::string name;
    nlohmann::json object;
    kubeapi::WallTime start;
    std::optional<std::chrono::steady_clock::time_point> deadline;
    std::optional<std::string> failure;
    std::optional<kubeapi::WallTime> finished;
    bool foreground_deletion = false;
    int attempts = 0;
  };

  void reap(Pod& pod);
  void advance(Job& job);
  void make_pods(Job& job);
  void start(Pod& pod, const Job& job);
  void kill(Pod& pod);
  std::vector<Pod*> pods_of(const std::string& job);
  void put(const Pod& pod);

  kubeapi::Store& store_;
  kubeapi::ClusterInfo info_;
  Recorder& recorder_;
  std::map<std::string, Job> jobs_;
  std::map<std::string, std::unique_ptr<Pod>> pods_;
};

}  // namespace zerodrop::lab
