#include "watch/controller.h"

#include <filesystem>
#include <iostream>

#include <fmt/format.h>

#include "base/error.h"
#include "watch/events.h"
#include "watch/ingress.h"
#include "watch/runs.h"

namespace zerodrop::watch {

using Json = nlohmann::json;
using Steady = std::chrono::steady_clock;

namespace {

const Json& template_labels(const Json& workload) {
  static const Json null;
  try {
    return workload.at("spec").at("template").at("metadata").at("labels");
  } catch (const Json::exception&) {
    return null;
  }
}

// What the controller keeps of a workload or Service: its identity (an Event's involvedObject)
// and a workload's template labels (what Services select). Informers see every workload of the
// cluster, so whole objects here doubled the tracker's memory.
Json slim(const Json& object) {
  Json meta = object.value("metadata", Json::object());
  Json out = {{"metadata",
               {{"name", meta.value("name", "")},
                {"namespace", meta.value("namespace", "")},
                {"uid", meta.value("uid", "")}}}};
  const Json& labels = template_labels(object);
  if (!labels.is_null()) {
    out["spec"]["template"]["metadata"]["labels"] = labels;
  }
  return out;
}

std::string object_namespace(const Json& object) {
  return object.value("metadata", Json::object()).value("namespace", "");
}

}  // namespace

Controller::Controller(const Options& options, ControllerParts parts)
    : o_(options), parts_(std::move(parts)) {}

void Controller::set_namespaces(std::optional<std::set<std::string>> admitted) {
  std::lock_guard lock(mutex_);
  admitted_ = std::move(admitted);
}

std::optional<ServiceInfo> Controller::service_for(const Json& workload) const {
  std::string ns = object_namespace(workload);
  std::optional<ServiceInfo> found;
  for (const auto& [key, s] : services_) {
    if (s.namespace_name == ns && selects(s, template_labels(workload))) {
      if (s.problem.empty() && !s.target.url.empty()) {
        return s;  // a probed one before one that is not (a bad annotation, headless)
      }
      found = found ? found : s;
    }
  }
  return found;
}

// Under mutex_. Recomputed only when a workload or Service changed: with 1,000 workloads and as
// many Services, matching every pair on each 5 s hand-out was most of an idle watcher's CPU.
const std::vector<ServiceInfo>& Controller::probed_services() {
  if (!probed_dirty_) {
    return probed_;
  }
  probed_.clear();
  std::map<std::string, std::vector<const Json*>> labels_by_namespace;
  for (const auto& [workload, object] : workloads_) {
    labels_by_namespace[workload.namespace_name].push_back(&template_labels(object));
  }
  for (const auto& [key, s] : services_) {
    if (s.target.url.empty() && s.problem.empty()) {
      continue;  // headless: nothing to probe and nothing to say
    }
    auto it = labels_by_namespace.find(s.namespace_name);
    if (it == labels_by_namespace.end()) {
      continue;
    }
    for (const Json* labels : it->second) {
      if (selects(s, *labels)) {
        probed_.push_back(s);
        break;
      }
    }
  }
  probed_dirty_ = false;
  return probed_;
}

void Controller::on_workload(const std::string& kind, const verify::WatchEvent& e) {
  if (e.type == verify::WatchType::bookmark || e.type == verify::WatchType::error) {
    return;
  }
  std::lock_guard lock(mutex_);
  if (admitted_ && !admitted_->contains(object_namespace(e.object))) {
    return;
  }
  verify::WatchEvent trimmed{e.type, trim_workload(e.object)};
  if (trimmed.object.is_object()) {
    trimmed.object["kind"] = kind;
    trimmed.object["apiVersion"] = std::string(api_version(kind));
  }
  on_workload_locked(trimmed);
}

// Under mutex_.
void Controller::on_workload_locked(const verify::WatchEvent& e) {
  WorkloadKey key = workload_key(e.object);
  std::vector<RolloutChange> changes;
  if (e.type == verify::WatchType::deleted) {
    changes = tracker_.on_deleted(e.object);
    workloads_.erase(key);
  } else {
    changes = tracker_.on_object(e.object, e.type == verify::WatchType::listed
                                               ? RolloutTracker::Source::listed
                                               : RolloutTracker::Source::event);
    workloads_[key] = slim(e.object);
  }
  targets_dirty_ = true;
  probed_dirty_ = true;
  for (const RolloutChange& c : changes) {
    if (c.type == RolloutChange::Type::skipped) {
      skipped_.push_back(c);
    } else if (c.type == RolloutChange::Type::ended) {
      auto it = active_.find(c.key);
      if (it != active_.end()) {
        it->second->on_workload(c.object);
        it->second->ended(c.end, c.reason);
        active_.erase(it);
      }
    } else {
      start(c);
    }
  }
  auto it = active_.find(key);
  if (it != active_.end() && e.type != verify::WatchType::deleted) {
    it->second->on_workload(e.object);
  }
}

void Controller::on_service(const verify::WatchEvent& e) {
  if (e.type == verify::WatchType::bookmark || e.type == verify::WatchType::error) {
    return;
  }
  std::lock_guard lock(mutex_);
  if (admitted_ && !admitted_->contains(object_namespace(e.object))) {
    return;
  }
  ServiceInfo s = read_service(e.object);
  std::string key = s.target.svc;
  if (e.type == verify::WatchType::deleted) {
    services_.erase(key);
    service_objects_.erase(key);
  } else {
    services_[key] = std::move(s);
    service_objects_[key] = slim(e.object);
  }
  targets_dirty_ = true;
  probed_dirty_ = true;
}

void Controller::on_ingress(const verify::WatchEvent& e) {
  if (e.type == verify::WatchType::bookmark || e.type == verify::WatchType::error) {
    return;
  }
  std::lock_guard lock(mutex_);
  if (admitted_ && !admitted_->contains(object_namespace(e.object))) {
    return;
  }
  Json meta = e.object.value("metadata", Json::object());
  std::string key = meta.value("namespace", "") + "/" + meta.value("name", "");
  if (e.type == verify::WatchType::deleted) {
    ingresses_.erase(key);
  } else {
    ingresses_[key] = {
        {"metadata",
         {{"name", meta.value("name", "")}, {"namespace", meta.value("namespace", "")}}},
        {"spec", e.object.value("spec", Json::object())}};
  }
  targets_dirty_ = true;
}

// Under mutex_.
void Controller::start(const RolloutChange& change) {
  MeasureSetup setup;
  setup.start = change;
  setup.service = service_for(change.object);
  setup.folder_name = new_run_name(o_.out, change.key, std::chrono::system_clock::now());
  setup.folder = (std::filesystem::path(o_.out) / setup.folder_name).string();
  setup.server_version = parts_.server_version;
  setup.tail = std::chrono::duration_cast<std::chrono::milliseconds>(o_.tail);
  try {
    auto m = std::make_shared<Measured>(parts_.client, std::move(setup));
    parts_.hub.attach(m);
    active_[change.key] = m;
    measuring_.push_back(m);
    std::cerr << fmt::format("zerodrop: watch: {}: rollout started ({}{}); measuring into {}\n",
                             change.key.text(), change.reason, change.whole ? "" : ", partial",
                             m->folder_name());
  } catch (const std::exception& e) {
    std::cerr << fmt::format("zerodrop: watch: {}: cannot measure the rollout: {}\n",
                             change.key.text(), e.what());
  }
}

void Controller::say(const WorkloadKey& key, const Json& object, const EventText& text) {
  if (!o_.events) {
    return;
  }
  std::string error =
      post_event(parts_.client, event_object(object, key, text, verify::rfc3339_now()));
  if (!error.empty()) {
    parts_.metrics.event_failed();
    std::cerr << fmt::format("zerodrop: watch: {}: the Event was refused: {}\n", key.text(), error);
  }
}

void Controller::end(std::shared_ptr<Measured> m, Steady::time_point now) {
  parts_.hub.detach(m);
  RolloutResult r;
  try {
    r = m->finish(
        parts_.finish,
        parts_.hub.lost(now, std::chrono::duration_cast<std::chrono::seconds>(o_.agent_silence)));
    write_result((std::filesystem::path(o_.out) / r.folder).string(), r);
  } catch (const Error& e) {
    std::cerr << fmt::format("zerodrop: watch: {}: the run folder {}: {}\n", m->key().text(),
                             m->folder_name(), e.what());
    return;
  }
  parts_.metrics.rollout_ended(r);
  EventText text = event_text(r);
  std::cerr << fmt::format("zerodrop: watch: {}: {}: {}\n", r.key.text(), text.reason,
                           text.message);
  Json object;
  {
    std::lock_guard lock(mutex_);
    auto it = workloads_.find(r.key);
    object = it == workloads_.end() ? Json() : it->second;
  }
  say(r.key, object, text);
  retain(o_.out, o_.keep_runs);
}

void Controller::tick(Steady::time_point now) {
  std::vector<std::shared_ptr<Measured>> done;
  std::vector<verify::ProbeTarget> targets;
  bool hand_targets = false;
  std::vector<std::pair<std::string, Json>> problems;
  std::vector<RolloutChange> skipped;
  auto silence = std::chrono::duration_cast<std::chrono::seconds>(o_.agent_silence);
  {
    std::lock_guard lock(mutex_);
    for (auto it = measuring_.begin(); it != measuring_.end();) {
      if ((*it)->done(now, std::chrono::duration_cast<std::chrono::seconds>(o_.drain_limit))) {
        done.push_back(*it);
        it = measuring_.erase(it);
      } else {
        ++it;
      }
    }
    if (targets_dirty_ || now - targets_at_ > std::chrono::seconds(5)) {
      std::vector<ServiceInfo> probed = probed_services();
      for (const ServiceInfo& s : probed_services()) {
        if (auto t = ingress_target(s, ingresses_, parts_.ingress_controller)) {
          ServiceInfo via_ingress = s;
          via_ingress.target = std::move(*t);
          probed.push_back(std::move(via_ingress));
        }
      }
      targets = agent_targets(probed, o_.rate, o_.budget, parts_.hub.reporting(now, silence));
      hand_targets = true;
      targets_dirty_ = false;
      targets_at_ = now;
      for (const ServiceInfo& s : probed_services()) {
        if (!s.problem.empty() && problems_said_.insert(s.problem).second) {
          problems.emplace_back(s.problem, service_objects_[s.target.svc]);
        }
      }
    }
    parts_.metrics.in_progress(static_cast<int>(active_.size()));
    skipped.swap(skipped_);
  }
  for (const RolloutChange& c : skipped) {
    std::cerr << fmt::format("zerodrop: watch: {}: not measured: {}\n", c.key.text(), c.reason);
    say(c.key, c.object,
        {"RolloutNotMeasured", c.reason + "; pods deleted by hand are not measured", false});
  }
  if (hand_targets) {
    parts_.hub.set_targets(std::move(targets));
  }
  for (const auto& [text, service] : problems) {
    std::cerr << "zerodrop: watch: warning: " << text << "\n";
    WorkloadKey key{"Service", object_namespace(service),
                    service.value("metadata", Json::object()).value("name", "")};
    Json event =
        event_object(service, key, {"WatchProbeConfig", text, true}, verify::rfc3339_now());
    event["involvedObject"]["apiVersion"] = "v1";
    if (o_.events && !post_event(parts_.client, event).empty()) {
      parts_.metrics.event_failed();
    }
  }
  for (const std::string& p : parts_.hub.take_problems()) {
    std::cerr << "zerodrop: watch: warning: " << p << "\n";
  }
  parts_.hub.prune(now, std::chrono::minutes(10));
  parts_.metrics.agents(parts_.hub.reporting(now, silence),
                        static_cast<int>(parts_.hub.lost(now, silence).size()));
  for (auto& m : done) {
    end(std::move(m), now);
  }
}

void Controller::stop_all() {
  std::vector<std::shared_ptr<Measured>> all;
  {
    std::lock_guard lock(mutex_);
    all.swap(measuring_);
    active_.clear();
  }
  for (auto& m : all) {
    end(std::move(m), Steady::now());
  }
}

}  // namespace zerodrop::watch
