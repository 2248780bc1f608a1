#include "verify/observer.h"

#include <csignal>

#include <fmt/format.h>

namespace zerodrop::verify {
namespace {

using nlohmann::json;
using record::Event;
using record::EventKind;

std::string str(const json& object, const char* key) {
  auto it = object.find(key);
  return it != object.end() && it->is_string() ? it->get<std::string>() : std::string();
}

int64_t num(const json& object, const char* key) {
  auto it = object.find(key);
  return it != object.end() && it->is_number_integer() ? it->get<int64_t>() : 0;
}

const json& field(const json& object, const char* key) {
  static const json kEmpty = json::object();
  auto it = object.find(key);
  return it != object.end() && it->is_object() ? *it : kEmpty;
}

const json& list(const json& object, const char* key) {
  static const json kEmpty = json::array();
  auto it = object.find(key);
  return it != object.end() && it->is_array() ? *it : kEmpty;
}

std::string name_of(const json& object) {
  return str(field(object, "metadata"), "name");
}

Event event(Micros t, EventKind kind, std::string pod, std::string detail) {
  Event e;
  e.t = t;
  e.kind = kind;
  e.pod = std::move(pod);
  e.detail = std::move(detail);
  return e;
}

bool condition_true(const json& pod, std::string_view type) {
  for (const json& c : list(field(pod, "status"), "conditions")) {
    if (c.is_object() && str(c, "type") == type) {
      return str(c, "status") == "True";
    }
  }
  return false;
}

// The terminated state of the serving container (any container when the name is unknown).
const json* terminated(const json& pod, const std::string& container) {
  for (const json& s : list(field(pod, "status"), "containerStatuses")) {
    if (!s.is_object() || (!container.empty() && str(s, "name") != container)) {
      continue;
    }
    const json& state = field(s, "state");
    if (state.contains("terminated") && state["terminated"].is_object()) {
      return &state["terminated"];
    }
  }
  return nullptr;
}

Event exit_event(Micros t, const std::string& pod, const json& term) {
  Event e = event(t, EventKind::pod_exited, pod,
                  fmt::format("container terminated: {} (finishedAt {})",
                              str(term, "reason").empty() ? "?" : str(term, "reason"),
                              str(term, "finishedAt")));
  int64_t code = num(term, "exitCode");
  // A runtime reports death by signal N as exit code 128 + N (137 = SIGKILL).
  if (code > 128 && code < 160) {
    e.signal = static_cast<int>(code - 128);
  } else {
    e.exit_code = static_cast<int>(code);
  }
  return e;
}

std::string deletion_detail(const json& meta) {
  return fmt::format(
      "deletionTimestamp {} with grace {} s (the API server stamps deletion + "
      "grace; the deletion itself was {} s earlier)",
      str(meta, "deletionTimestamp"), num(meta, "deletionGracePeriodSeconds"),
      num(meta, "deletionGracePeriodSeconds"));
}

// Endpoint conditions with KEP-1672's defaults: ready nil = true, serving nil = ready,
// terminating nil = false.
record::Conditions conditions_of(const json& endpoint) {
  const json& c = field(endpoint, "conditions");
  record::Conditions out;
  out.ready = !c.contains("ready") || c["ready"] != false;
  out.serving =
      c.contains("serving") && c["serving"].is_boolean() ? c["serving"].get<bool>() : out.ready;
  out.terminating = c.contains("terminating") && c["terminating"] == true;
  return out;
}

std::string conditions_text(const record::Conditions& c) {
  return fmt::format("ready={} serving={} terminating={}", c.ready, c.serving, c.terminating);
}

// How long after a pod left the EndpointSlices a router may still send it new connections and
// the pod still counts as the one a nameless failure went to.
constexpr Micros kRouterLag = std::chrono::seconds(2);

}  // namespace

bool DeploymentStatus::rolled_out() const {
  return observed_generation >= generation && updated == replicas && status_replicas == updated
         && available == updated;
}

void Observer::pod_status(const json& pod, PodSeen& seen, Micros t, std::vector<Event>& out) {
  std::string name = name_of(pod);
  bool ready = condition_true(pod, "Ready");
  if (ready != seen.ready && !seen.exited) {
    out.push_back(event(t, ready ? EventKind::pod_ready : EventKind::pod_unready, name,
                        "Ready condition " + std::string(ready ? "True" : "False")));
    seen.ready = ready;
  }
  const json& meta = field(pod, "metadata");
  if (!seen.deleting && meta.contains("deletionTimestamp")
      && !meta["deletionTimestamp"].is_null()) {
    seen.deleting = true;
    out.push_back(event(t, EventKind::deletion_started, name, deletion_detail(meta)));
    if (template_.prestop) {
      // Not observable through the API: kubelet runs the hook, then signals, on the node.
      Event signal = event(
          t + std::chrono::duration_cast<Micros>(*template_.prestop), EventKind::signal_sent, name,
          fmt::format("inferred: deletion seen + preStop {}", format_duration(*template_.prestop)));
      signal.signal = SIGTERM;
      out.push_back(signal);
    }
  }
  if (const json* term = seen.exited ? nullptr : terminated(pod, template_.container)) {
    seen.exited = true;
    out.push_back(exit_event(t, name, *term));
  }
}

std::vector<Event> Observer::on_pod(const WatchEvent& watch, Micros t) {
  std::vector<Event> out;
  std::string name = name_of(watch.object);
  if (name.empty()) {
    return out;
  }
  auto [it, inserted] = pods_.try_emplace(name);
  PodSeen& seen = it->second;
  if (inserted) {
    const json& status = field(watch.object, "status");
    out.push_back(
        event(t, EventKind::pod_created, name,
              fmt::format("{}node {}, pod IP {}",
                          watch.type == WatchType::listed ? "existed at the start; " : "",
                          str(field(watch.object, "spec"), "nodeName"), str(status, "podIP"))));
  }
  if (watch.type == WatchType::deleted) {
    if (!seen.gone) {
      seen.gone = true;
      pod_status(watch.object, seen, t, out);
      if (!seen.exited) {
        seen.exited = true;
        out.push_back(event(t, EventKind::pod_exited, name,
                            "pod object deleted; its exit status was not observed"));
      }
    }
    return out;
  }
  pod_status(watch.object, seen, t, out);
  return out;
}

std::vector<Event> Observer::on_slice(const WatchEvent& watch, Micros t) {
  std::string slice = name_of(watch.object);
  auto& mine = slices_[slice];
  mine.clear();
  if (watch.type != WatchType::deleted) {
    for (const json& endpoint : list(watch.object, "endpoints")) {
      const json& ref = field(endpoint, "targetRef");
      if (str(ref, "kind") == "Pod" && !str(ref, "name").empty()) {
        mine[str(ref, "name")] = conditions_of(endpoint);
      }
    }
  }
  // A Service's endpoints are the union of its slices, keyed by pod.
  std::map<std::string, record::Conditions> now;
  for (const auto& [name, pods] : slices_) {
    now.insert(pods.begin(), pods.end());
  }
  std::vector<Event> out;
  for (const auto& [pod, c] : now) {
    auto old = endpoints_.find(pod);
    if (old == endpoints_.end() || !(old->second == c)) {
      Event e = event(t, EventKind::endpoint_changed, pod, conditions_text(c));
      e.conditions = c;
      out.push_back(e);
    }
  }
  for (const auto& [pod, c] : endpoints_) {
    if (!now.contains(pod)) {
      Event e = event(t, EventKind::endpoint_changed, pod, "removed from the EndpointSlices");
      e.conditions = record::Conditions{};
      out.push_back(e);
    }
  }
  endpoints_ = std::move(now);
  return out;
}

std::vector<Event> Observer::on_event(const WatchEvent& watch, Micros t) {
  std::vector<Event> out;
  const json& involved = field(watch.object, "involvedObject");
  std::string pod = str(involved, "name");
  // Listed events happened before the run; only pods of this Deployment count.
  if (watch.type == WatchType::listed || watch.type == WatchType::deleted
      || str(involved, "kind") != "Pod" || !pods_.contains(pod)) {
    return out;
  }
  std::string reason = str(watch.object, "reason");
  std::string message = str(watch.object, "message");
  if (reason == "Killing") {
    // kubelet records Killing just before it runs the preStop hook (then the stop signal).
    out.push_back(event(t, template_.has_prestop ? EventKind::prestop_started : EventKind::note,
                        pod, "kubelet: Killing: " + message));
  } else if (reason == "Unhealthy") {
    bool liveness = message.starts_with("Liveness");
    out.push_back(event(t, EventKind::probe_failed, pod,
                        fmt::format("{}: {}", liveness ? "liveness" : "readiness", message)));
  } else if (reason == "FailedPreStopHook") {
    out.push_back(event(t, EventKind::prestop_failed, pod, message));
  }
  return out;
}

std::vector<Event> Observer::on_deployment(const WatchEvent& watch, Micros t) {
  const json& d = watch.object;
  const json& status = field(d, "status");
  DeploymentStatus now{
      num(field(d, "metadata"), "generation"),
      num(status, "observedGeneration"),
      field(d, "spec").contains("replicas") ? num(field(d, "spec"), "replicas") : 1,
      num(status, "replicas"),
      num(status, "updatedReplicas"),
      num(status, "readyReplicas"),
      num(status, "availableReplicas")};
  if (!first_generation_) {
    first_generation_ = now.generation;
  }
  std::vector<Event> out;
  bool changed = now.status_replicas != deployment_.status_replicas
                 || now.updated != deployment_.updated || now.ready != deployment_.ready
                 || now.available != deployment_.available
                 || now.generation != deployment_.generation;
  if (changed && watch.type != WatchType::listed) {
    out.push_back(event(
        t, EventKind::rollout_step, "",
        fmt::format("deployment generation {}: {} replicas, {} updated, {} ready, "
                    "{} available",
                    now.generation, now.status_replicas, now.updated, now.ready, now.available)));
  }
  deployment_ = now;
  return out;
}

void Observer::mark_old_pods() {
  for (const auto& [name, seen] : pods_) {
    if (!seen.gone) {
      old_pods_.insert(name);
    }
  }
}

size_t Observer::old_pods_left() const {
  size_t left = 0;
  for (const std::string& name : old_pods_) {
    left += !pods_.at(name).gone || endpoints_.contains(name) ? 1 : 0;
  }
  return left;
}

size_t Observer::pods_terminating() const {
  size_t n = 0;
  for (const auto& [name, seen] : pods_) {
    n += seen.deleting && !seen.gone ? 1 : 0;
  }
  return n;
}

std::string Observer::progress() const {
  const DeploymentStatus& d = deployment_;
  return fmt::format(
      "generation {} (first seen {}, observed {}), {} of {} updated, {} available, "
      "{} old pods left",
      d.generation, first_generation_.value_or(0), d.observed_generation, d.updated, d.replicas,
      d.available, old_pods_left());
}

bool Observer::rollout_complete() const {
  return deployment_.rolled_out() && deployment_.generation > first_generation_.value_or(0)
         && !old_pods_.empty() && old_pods_left() == 0;
}

size_t attribute_to_terminating(const std::vector<Event>& events,
                                std::vector<record::RequestRecord>& requests) {
  // Each pod's terminating window: from its deletion until it has exited and left the
  // EndpointSlices, plus the time routers may still lag behind the API (kRouterLag).
  struct Window {
    Micros from{0};
    Micros exited = Micros::max();
    Micros removed = Micros::max();
  };

  std::map<std::string, Window> windows;
  for (const Event& e : events) {
    if (e.kind == EventKind::deletion_started && !windows.contains(e.pod)) {
      windows[e.pod].from = e.t;
    } else if (e.kind == EventKind::pod_exited && windows.contains(e.pod)) {
      windows[e.pod].exited = std::min(windows[e.pod].exited, e.t);
    } else if (e.kind == EventKind::endpoint_changed && windows.contains(e.pod) && e.conditions
               && !e.conditions->serving && !e.conditions->terminating) {
      windows[e.pod].removed = std::min(windows[e.pod].removed, e.t);
    }
  }
  size_t attributed = 0;
  for (record::RequestRecord& r : requests) {
    if (!r.failed || !r.backend.empty() || r.connection != record::Connection::fresh) {
      continue;
    }
    Micros t = r.sent.value_or(r.intended);
    std::vector<std::string> terminating;
    for (const auto& [pod, w] : windows) {
      // The later of the two that were seen: a pod still in the slices may still get traffic.
      Micros until = w.exited == Micros::max()    ? w.removed
                     : w.removed == Micros::max() ? w.exited
                                                  : std::max(w.exited, w.removed);
      if (t >= w.from && (until == Micros::max() || t <= until + kRouterLag)) {
        terminating.push_back(pod);
      }
    }
    if (terminating.size() == 1) {
      r.backend = terminating.front();
      ++attributed;
    } else if (terminating.size() > 1) {
      r.backend_candidates = std::move(terminating);  // the diagnosis weighs each
    }
  }
  return attributed;
}

}  // namespace zerodrop::verify
