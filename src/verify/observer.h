#pragma once

#include <map>
#include <optional>
#include <set>
#include <string>
#include <vector>

#include "base/duration.h"
#include "record/run_record.h"
#include "verify/watch.h"

namespace zerodrop::verify {

using record::Micros;

// What the Deployment's pod template says about termination, for inferences the API cannot
// show (kubelet sends the stop signal after the preStop hook, on the node, unobserved).
struct PodTemplate {
  std::string container;            // the serving container, "" = any
  std::optional<Duration> prestop;  // the hook's delay when known; 0 without a hook
  bool has_prestop = false;
};

// The Deployment's rollout status as the controller reports it.
struct DeploymentStatus {
  int64_t generation = 0;
  int64_t observed_generation = 0;
  int64_t replicas = 0;  // spec
  int64_t status_replicas = 0, updated = 0, ready = 0, available = 0;

  // kubectl rollout status' rule: observed, every replica updated and available, no extra.
  bool rolled_out() const;
};

// Turns watch events of Pods, EndpointSlices, core/v1 Events and the Deployment into run-record
// events on one clock (t = when verify received them). API timestamps (1 s precision, other
// clocks) go into the details only. Not thread-safe: the caller serializes.
class Observer {
public:
  explicit Observer(PodTemplate pod_template) : template_(std::move(pod_template)) {}

  std::vector<record::Event> on_pod(const WatchEvent& event, Micros t);
  std::vector<record::Event> on_slice(const WatchEvent& event, Micros t);
  std::vector<record::Event> on_event(const WatchEvent& event, Micros t);
  std::vector<record::Event> on_deployment(const WatchEvent& event, Micros t);

  // From now on the pods seen so far are the old ones the rollout must replace.
  void mark_old_pods();
  // The rollout is over: the Deployment rolled out, every old pod's object is gone and the
  // EndpointSlices hold none of them (stricter than kubectl rollout status).
  bool rollout_complete() const;

  const DeploymentStatus& deployment() const { return deployment_; }

  // The generation first seen (a later one means someone changed the template).
  std::optional<int64_t> first_generation() const { return first_generation_; }

  size_t old_pods_left() const;
  // Pods deleted whose object is not gone yet (still stopping, or not yet removed).
  size_t pods_terminating() const;
  // Where the rollout stands, for an error: "generation 3 (observed 3), 1 of 2 updated, 2
  // available, 1 old pod left".
  std::string progress() const;

private:
  struct PodSeen {
    bool ready = false;
    bool deleting = false;
    bool exited = false;
    bool gone = false;
  };

  void pod_status(const nlohmann::json& pod, PodSeen& seen, Micros t,
                  std::vector<record::Event>& out);

  PodTemplate template_;
  std::map<std::string, PodSeen> pods_;
  std::set<std::string> old_pods_;
  std::map<std::string, std::map<std::string, record::Conditions>> slices_;  // slice -> pod
  std::map<std::string, record::Conditions> endpoints_;  // the union, as last reported
  DeploymentStatus deployment_;
  std::optional<int64_t> first_generation_;
};

// Failed requests on fresh connections that name no backend (a refused or reset connection
// carries no identity) are given the one pod that was terminating when they were sent, when
// there was exactly one: a fresh connection reached a terminating pod only through a router
// that had not applied its termination. With several terminating, they become the request's
// backend_candidates. Returns how many were given one pod.
size_t attribute_to_terminating(const std::vector<record::Event>& events,
                                std::vector<record::RequestRecord>& requests);

}  // namespace zerodrop::verify
