#include "watch/measured.h"

#include <fmt/format.h>

#include "base/error.h"
#include "verify/measurement.h"
#include "verify/preflight.h"
#include "verify/propagation.h"

namespace zerodrop::watch {

using Json = nlohmann::json;
using record::EventKind;
using verify::api_event;

namespace {

verify::PodTemplate pod_template(const Json& deployment, record::Scenario& scenario) {
  verify::Target target;
  try {
    verify::read_template(deployment, target);
  } catch (const Error&) {
    return {};
  }
  scenario = target.scenario;
  return target.pod_template;
}

record::Scenario scenario_of(const Json& deployment) {
  record::Scenario s;
  pod_template(deployment, s);
  return s;
}

// The Deployment's spec.selector (null when absent).
Json labels_selector(const Json& deployment) {
  if (!deployment.is_object() || !deployment.contains("spec") || !deployment["spec"].is_object()) {
    return nullptr;
  }
  return deployment["spec"].value("selector", Json());
}

// The workload as verify's Observer reads a Deployment: a DaemonSet's counts (desired, current,
// updated, ready, available NumberScheduled) in a Deployment's fields; other kinds as they are
// (StatefulSets and Rollouts write the same status fields).
Json observer_view(const Json& object) {
  if (!object.is_object() || object.value("kind", "") != "DaemonSet") {
    return object;
  }
  Json status = object.value("status", Json::object());
  auto count = [&status](const char* name) {
    return status.value(name, int64_t{0});
  };
  Json view = object;
  view["spec"]["replicas"] = count("desiredNumberScheduled");
  view["status"] = {{"observedGeneration", count("observedGeneration")},
                    {"replicas", count("currentNumberScheduled")},
                    {"updatedReplicas", count("updatedNumberScheduled")},
                    {"readyReplicas", count("numberReady")},
                    {"availableReplicas", count("numberAvailable")}};
  return view;
}

verify::WatchSet watch_set(const MeasureSetup& s) {
  verify::WatchSet set;
  set.namespace_name = s.start.key.namespace_name;
  Json selector = labels_selector(s.start.object);
  if (!selector.is_object()) {
    throw Error("the workload has no spec.selector");
  }
  set.pod_selector = verify::selector_query(selector);
  set.service = s.service ? s.service->name : "";
  return set;
}

}  // namespace

Measured::Measured(const verify::ApiClient& client, MeasureSetup setup)
    : setup_(std::move(setup)), folder_(setup_.folder), timeline_(folder_, [&] {
        record::Scenario unused;
        return pod_template(setup_.start.object, unused);
      }()) {
  // The Observer learns the Deployment as it was before the change (its first generation),
  // then as it is, so its completion rule and steps read as in verify.
  const Json& before = setup_.start.before.is_null() ? setup_.start.object : setup_.start.before;
  timeline_.observe([&](verify::Observer& ob, record::Micros t) {
    return ob.on_deployment({verify::WatchType::listed, observer_view(before)}, t);
  });
  timeline_.add(api_event(timeline_.now(), EventKind::rollout_started,
                          fmt::format("zerodrop watch: {}{}", setup_.start.reason,
                                      setup_.start.whole ? "" : " (measured from here: partial)")));
  timeline_.observe([&](verify::Observer& ob, record::Micros t) {
    return ob.on_deployment({verify::WatchType::modified, observer_view(setup_.start.object)}, t);
  });
  watches_ = std::make_unique<verify::Watches>(client, watch_set(setup_), timeline_);
  if (!setup_.service) {
    timeline_.note("no Service selects the workload's pods: no agent traffic to measure");
  }
}

const std::string& Measured::svc() const {
  static const std::string none;
  return setup_.service ? setup_.service->target.svc : none;
}

void Measured::on_workload(const Json& object) {
  timeline_.observe([&](verify::Observer& ob, record::Micros t) {
    return ob.on_deployment({verify::WatchType::modified, observer_view(object)}, t);
  });
}

void Measured::agent_hello(const verify::AgentHello& h) {
  {
    std::lock_guard lock(mutex_);
    if (offsets_us_.contains(h.pod)) {
      return;
    }
    offsets_us_[h.pod] = h.wall_us - timeline_.wall_start_us();
  }
  timeline_.agent_hello(h);
}

bool Measured::agent_bucket(const verify::AgentHello& h, const verify::BackendBucket& b) {
  {
    std::lock_guard lock(mutex_);
    auto it = offsets_us_.find(h.pod);
    if (it == offsets_us_.end()) {
      return false;
    }
    int64_t t = b.start.count() + it->second;
    if (t < 0 || (window_end_ && t >= window_end_->count())) {
      return false;
    }
  }
  timeline_.agent_bucket(h, b);
  return true;
}

bool Measured::agent_request(const verify::AgentHello& h, const record::RequestRecord& r) {
  {
    std::lock_guard lock(mutex_);
    auto it = offsets_us_.find(h.pod);
    if (it == offsets_us_.end()) {
      return false;
    }
    int64_t t = r.intended.count() + it->second;
    if (t < 0 || (window_end_ && t >= window_end_->count())) {
      return false;
    }
  }
  timeline_.agent_request(h, r);
  return true;
}

void Measured::ended(RolloutEnd end, const std::string& reason) {
  std::lock_guard lock(mutex_);
  if (!end_) {
    end_ = end;
    end_reason_ = reason;
    ended_at_ = std::chrono::steady_clock::now();
  }
}

bool Measured::done(std::chrono::steady_clock::time_point now, std::chrono::seconds drain_limit) {
  std::lock_guard lock(mutex_);
  if (!end_) {
    return false;
  }
  if (!drained_at_) {
    size_t stopping =
        timeline_.with_observer([](verify::Observer& ob) { return ob.pods_terminating(); });
    if (stopping > 0 && now - *ended_at_ < drain_limit) {
      return false;
    }
    drained_at_ = now;
    window_end_ = timeline_.now() + std::chrono::duration_cast<record::Micros>(setup_.tail);
    timeline_.add(api_event(
        timeline_.now(), EventKind::rollout_finished,
        stopping == 0 ? fmt::format("the controller reported {} ({}); no deleted pod left",
                                    to_string(*end_), end_reason_)
                      : fmt::format("the controller reported {} ({}); {} deleted pods still "
                                    "stopping after {} s",
                                    to_string(*end_), end_reason_, stopping, drain_limit.count())));
  }
  return now - *drained_at_ >= setup_.tail + kSettle;
}

RolloutResult Measured::finish(const Finish& finish, const std::set<std::string>& lost) {
  watches_.reset();
  RolloutResult result;
  result.key = key();
  result.whole = setup_.start.whole;
  result.folder = setup_.folder_name;
  {
    std::lock_guard lock(mutex_);
    result.end = end_.value_or(RolloutEnd::unfinished);
    result.end_reason = end_ ? end_reason_ : "watch stopped before the controller reported an end";
    result.whole = result.whole && result.end != RolloutEnd::unfinished;
    result.agents = static_cast<int>(offsets_us_.size());
    for (const auto& [pod, offset] : offsets_us_) {
      result.agents_lost += lost.contains(pod) ? 1 : 0;
    }
  }
  if (result.agents_lost > 0) {
    timeline_.note(
        fmt::format("{} of {} agents stopped reporting during the rollout: their "
                    "silence is not counted as failed requests",
                    result.agents_lost, result.agents));
  }
  record::RunRecord head;
  head.engine = "watch";
  head.scenario = scenario_of(setup_.start.object);
  auto& extra = head.scenario.extra;
  extra["namespace"] = key().namespace_name;
  extra["deployment"] = key().name;
  extra["service"] = setup_.service ? setup_.service->name : "";
  extra["server_version"] = setup_.server_version;
  extra["measured"] = result.whole ? "whole rollout" : "partial: watch started mid-rollout";
  extra["ended"] = fmt::format("{}: {}", to_string(result.end), result.end_reason);
  std::vector<std::string> nodes = timeline_.agent_nodes();
  std::string routers;
  for (const std::string& node : nodes) {
    routers +=
        fmt::format("{}node/{}: the agent on node {}", routers.empty() ? "" : "; ", node, node);
  }
  extra["routers"] = routers;
  extra["agents"] = std::to_string(nodes.size());
  record::RunRecord run = verify::close_measurement(timeline_, std::move(head), folder_);
  if (window_end_) {
    run.end = *window_end_;  // later traffic is the baseline's
  }
  result.verdict = finish(folder_, run);
  for (const verify::NodeUpdate& u : timeline_.updates()) {
    if (u.hi) {
      std::string node = u.node.starts_with("node/") ? u.node.substr(5) : u.node;
      result.propagation.emplace_back(node,
                                      std::chrono::duration<double>(*u.hi - u.deleted).count());
    }
  }
  return result;
}

}  // namespace zerodrop::watch
