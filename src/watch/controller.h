#pragma once

#include <chrono>
#include <map>
#include <memory>
#include <mutex>
#include <set>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "verify/api_client.h"
#include "verify/watch.h"
#include "watch/agent_hub.h"
#include "watch/measured.h"
#include "watch/metrics.h"
#include "watch/rollouts.h"
#include "watch/targets.h"
#include "watch/watch.h"

namespace zerodrop::watch {

// What the controller needs besides the options.
struct ControllerParts {
  const verify::ApiClient& client;
  const Finish& finish;
  Metrics& metrics;
  AgentHub& hub;
  std::string server_version;
  std::string ingress_controller;  // http://IP:PORT of --ingress-service ("" = no Ingress targets)
};

// The leader's state: the informers' workloads (of every kind followed) and Services, the rollouts
// being measured, and what each one's end writes (run folder, Event, metrics). Informer threads
// call on_*, the main thread tick(). Thread-safe.
class Controller {
public:
  Controller(const Options& options, ControllerParts parts);

  // An informer's event on a workload of `kind` ("Deployment", "StatefulSet", ...): the kind is
  // stamped on the object (a list's items come without it).
  void on_workload(const std::string& kind, const verify::WatchEvent& e);
  void on_service(const verify::WatchEvent& e);
  // networking.k8s.io/v1 Ingresses (watched only with --ingress-service).
  void on_ingress(const verify::WatchEvent& e);
  // Namespaces the selector admits (all when it is not set); objects of others are ignored.
  void set_namespaces(std::optional<std::set<std::string>> admitted);

  // Ends the measurements that are done, hands the agents their targets, says the Services'
  // probe problems as Warning Events, updates the gauges.
  void tick(std::chrono::steady_clock::time_point now);

  // Workloads known so far.
  size_t workloads() const {
    std::lock_guard lock(mutex_);
    return tracker_.workloads();
  }

  // Ends every measurement now, as unfinished (partial).
  void stop_all();

private:
  void on_workload_locked(const verify::WatchEvent& e);
  void start(const RolloutChange& change);
  void end(std::shared_ptr<Measured> m, std::chrono::steady_clock::time_point now);
  std::optional<ServiceInfo> service_for(const nlohmann::json& workload) const;
  const std::vector<ServiceInfo>& probed_services();
  void say(const WorkloadKey& key, const nlohmann::json& object, const EventText& text);

  const Options& o_;
  ControllerParts parts_;
  mutable std::mutex mutex_;
  RolloutTracker tracker_;
  std::map<WorkloadKey, nlohmann::json> workloads_;
  std::map<std::string, ServiceInfo> services_;  // by NS/NAME
  std::map<std::string, nlohmann::json> service_objects_;
  std::map<std::string, nlohmann::json> ingresses_;  // by NS/NAME: metadata and spec
  std::map<WorkloadKey, std::shared_ptr<Measured>> active_;
  std::vector<std::shared_ptr<Measured>> measuring_;  // active, and ended ones in their tail
  std::optional<std::set<std::string>> admitted_;
  std::set<std::string> problems_said_;
  std::vector<RolloutChange> skipped_;  // template changes with no rollout to measure, to say
  bool targets_dirty_ = true;
  std::vector<ServiceInfo> probed_;  // probed_services(), valid while !probed_dirty_
  bool probed_dirty_ = true;
  std::chrono::steady_clock::time_point targets_at_{};
};

}  // namespace zerodrop::watch
