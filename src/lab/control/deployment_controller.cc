// Asio trips -Wnull-dereference at -O2 (false positives inside io_context; GCC 12).
#pragma GCC diagnostic ignored "-Wnull-dereference"
#include "lab/control/deployment_controller.h"

#include <algorithm>

#include <boost/asio/io_context.hpp>
#include <fmt/format.h>

#include "base/listen.h"
#include "lab/control/endpoint_controller.h"
#include "lab/recording/recorder.h"

namespace zerodrop::lab {

using record::EventKind;

DeploymentController::DeploymentController(boost::asio::io_context& io, Recorder& recorder,
                                           const PodSpec& spec, EndpointController& endpoints,
                                           kube::RolloutLimits limits, Duration min_ready,
                                           std::string ip_prefix, std::optional<PodSpec> next)
    : io_(io),
      recorder_(recorder),
      spec_(spec),
      next_(std::move(next)),
      endpoints_(endpoints),
      limits_(limits),
      min_ready_(min_ready),
      ip_prefix_(std::move(ip_prefix)) {}

DeploymentController::~DeploymentController() {
  kill_all(std::string(record::kEndOfRunKill));
}

void DeploymentController::create_initial_pods() {
  for (int i = 0; i < limits_.replicas; ++i) {
    add_pod(revision_);
  }
}

Pod& DeploymentController::add_pod(int revision) {
  int index = next_index_++;
  std::string ip = fmt::format("{}{}.{}", ip_prefix_, index / 250, index % 250 + 2);
  PodSpec spec = revision > 1 && next_ ? *next_ : spec_;
  if (spec.port == 0) {
    spec.port = pick_free_port();  // its own port too, so that servers binding 0.0.0.0 work
  }
  size_t slot = pods_.size();  // pods are never erased, so the slot stays valid
  pods_.push_back(std::make_unique<Pod>(io_, recorder_, spec, fmt::format("pod-{}", index), ip,
                                        revision, [this, slot] { publish(*pods_[slot]); }));
  Pod& pod = *pods_.back();
  pod.start();
  publish(pod);
  return pod;
}

void DeploymentController::publish(const Pod& pod) {
  if (pod.gone()) {
    endpoints_.remove(pod.name());
    return;
  }
  endpoints_.publish(
      {pod.name(), pod.ip(), pod.port(), conditions_of(pod.ready(), pod.terminating())});
}

bool DeploymentController::all_ready() const {
  return std::all_of(pods_.begin(), pods_.end(),
                     [](const auto& p) { return p->gone() || p->ready(); });
}

// Live pods in creation order; a pod's id is its slot in pods_.
std::vector<kube::PodView> DeploymentController::views() const {
  std::vector<kube::PodView> out;
  record::Micros now = recorder_.now();
  for (size_t slot = 0; slot < pods_.size(); ++slot) {
    const Pod& p = *pods_[slot];
    if (p.gone()) {
      continue;
    }
    std::optional<record::Micros> since = p.ready_since();
    std::optional<Duration> ready_for;
    if (since) {
      ready_for = now - *since;
    }
    bool available = kube::available(p.ready(), p.terminating(), ready_for, min_ready_);
    out.push_back({slot, p.revision(), p.terminating(), available});
  }
  return out;
}

void DeploymentController::start(Action action, int scale_to) {
  if (action == Action::none) {
    return;  // a client acts, through delete_pod() or another start()
  }
  started_ = true;
  finished_ = false;
  switch (action) {
    case Action::none:
      break;
    case Action::restart:
      ++revision_;
      recorder_.pod_event(EventKind::rollout_started, "",
                          fmt::format("rollout restart to revision {}: maxSurge {}, "
                                      "maxUnavailable {}",
                                      revision_, limits_.max_surge, limits_.max_unavailable));
      break;
    case Action::scale_down: {
      recorder_.pod_event(EventKind::rollout_started, "",
                          fmt::format("scale from {} to {}", limits_.replicas, scale_to));
      limits_.replicas = scale_to;
      // ReplicaSet scale-down deletes the most recently created pods (views() is in creation
      // order) first.
      std::vector<kube::PodView> live = views();
      kube::RolloutPlan plan;
      for (size_t i = static_cast<size_t>(std::max(0, scale_to)); i < live.size(); ++i) {
        plan.remove.push_back(live[i].id);
      }
      apply(plan);
      break;
    }
    case Action::delete_pod: {
      std::vector<kube::PodView> live = views();
      recorder_.pod_event(EventKind::rollout_started, "", "delete one pod");
      if (!live.empty()) {
        apply({0, {live.front().id}});
      }
      break;
    }
  }
  reconcile();  // the controllers sync on the change at once (a restart's first surge pod)
}

bool DeploymentController::delete_pod(const std::string& name) {
  for (const kube::PodView& view : views()) {
    if (pods_[view.id]->name() == name && !view.terminating) {
      started_ = true;
      finished_ = false;
      recorder_.pod_event(EventKind::rollout_started, name, "delete pod " + name);
      apply({0, {view.id}});
      reconcile();  // its ReplicaSet replaces it at once
      return true;
    }
  }
  return false;
}

void DeploymentController::apply(const kube::RolloutPlan& plan) {
  for (int i = 0; i < plan.create; ++i) {
    Pod& pod = add_pod(revision_);
    recorder_.pod_event(EventKind::rollout_step, pod.name(),
                        fmt::format("created {} (revision {})", pod.name(), revision_));
  }
  for (size_t slot : plan.remove) {
    Pod& pod = *pods_[slot];
    recorder_.pod_event(EventKind::rollout_step, pod.name(),
                        fmt::format("deleting {}", pod.name()));
    pod.delete_pod();
  }
}

bool DeploymentController::reconcile() {
  // The controller's next sync follows the events of its own writes within milliseconds: plan
  // again until there is nothing to do (a scale-down makes room for the next surge pod). Each
  // plan creates or deletes a pod, so the bound is never reached by a correct planner.
  int bound = 4 * (limits_.replicas + limits_.max_surge) + 4;
  for (kube::RolloutPlan plan = kube::plan_rollout(views(), revision_, limits_);
       !plan.empty() && bound-- > 0; plan = kube::plan_rollout(views(), revision_, limits_)) {
    apply(plan);
  }
  if (!started_) {
    return false;
  }
  if (!finished_ && kube::rollout_complete(views(), revision_, limits_.replicas)) {
    finished_ = true;
    recorder_.pod_event(
        EventKind::rollout_finished, "",
        fmt::format("{} pods of revision {} available", limits_.replicas, revision_));
  }
  return finished_ && terminating_count() == 0;
}

void DeploymentController::kill_all(const std::string& why) {
  for (const auto& p : pods_) {
    if (!p->gone()) {
      p->kill_now(why);
    }
  }
}

bool DeploymentController::new_pod_ready() const {
  return revision_ > 1 && std::any_of(pods_.begin(), pods_.end(), [this](const auto& p) {
           return p->revision() == revision_ && p->ready() && !p->terminating();
         });
}

int DeploymentController::ready_count() const {
  return static_cast<int>(std::count_if(
      pods_.begin(), pods_.end(), [](const auto& p) { return p->ready() && !p->terminating(); }));
}

int DeploymentController::terminating_count() const {
  return static_cast<int>(std::count_if(
      pods_.begin(), pods_.end(), [](const auto& p) { return p->terminating() && !p->gone(); }));
}

}  // namespace zerodrop::lab
