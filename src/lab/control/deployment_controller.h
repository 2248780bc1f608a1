#pragma once

#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "kube/rollout.h"
#include "lab/pods/pod.h"

namespace boost::asio {
class io_context;
}  // namespace boost::asio

namespace zerodrop::lab {

class EndpointController;
class Recorder;

// What the lab does to the running workload.
enum class Action {
  restart,     // kubectl rollout restart: every pod replaced by a new revision
  scale_down,  // kubectl scale --replicas N: the newest pods are deleted at once
  delete_pod,  // kubectl delete pod: one pod deleted, its ReplicaSet replaces it
  none,        // nothing: a client of the lab's Kubernetes API acts (--kube-api)
};

// The Deployment / ReplicaSet controller of the emulated cluster, with its pods (kubelet) and the
// feed of pod states into the endpoint controller. Control thread only.
class DeploymentController {
public:
  // `ip_prefix` is "127.B." (pods get 127.B.C.D). Pods are named pod-1, pod-2, … Pods of
  // revision 1 run `spec`; those of later revisions run `next` when given (a version change).
  DeploymentController(boost::asio::io_context& io, Recorder& recorder, const PodSpec& spec,
                       EndpointController& endpoints, kube::RolloutLimits limits,
                       Duration min_ready, std::string ip_prefix,
                       std::optional<PodSpec> next = std::nullopt);
  ~DeploymentController();

  // Creates `replicas` pods of revision 1. Throws Error when the command cannot run.
  void create_initial_pods();
  bool all_ready() const;
  // Starts the action (records rollout_started); again later for another action.
  void start(Action action, int scale_to);
  // Deletes the named pod as `kubectl delete pod` does; false when no such live pod.
  bool delete_pod(const std::string& name);
  // One reconcile; true once the action is complete and every deleted pod is gone.
  bool reconcile();
  // SIGKILLs every pod still running (the end of the run, or Ctrl-C).
  void kill_all(const std::string& why);

  // Whether a pod of the rollout's new revision is Ready (false before any rollout).
  bool new_pod_ready() const;
  int ready_count() const;
  int terminating_count() const;

private:
  Pod& add_pod(int revision);
  void publish(const Pod& pod);
  std::vector<kube::PodView> views() const;
  void apply(const kube::RolloutPlan& plan);

  boost::asio::io_context& io_;
  Recorder& recorder_;
  PodSpec spec_;
  std::optional<PodSpec> next_;
  EndpointController& endpoints_;
  kube::RolloutLimits limits_;
  Duration min_ready_;
  std::string ip_prefix_;
  std::vector<std::unique_ptr<Pod>> pods_;
  int revision_ = 1;
  int next_index_ = 1;
  bool started_ = false;
  bool finished_ = false;
};

}  // namespace zerodrop::lab
