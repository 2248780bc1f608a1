#include "watch/rollouts.h"

#include <set>

#include <fmt/format.h>

namespace zerodrop::watch {

using Json = nlohmann::json;

namespace {

const Json& field(const Json& j, const char* name) {
  static const Json null;
  return j.is_object() && j.contains(name) ? j[name] : null;
}

int64_t number(const Json& j, const char* name) {
  const Json& v = field(j, name);
  return v.is_number_integer() ? v.get<int64_t>() : 0;
}

std::string text(const Json& j, const char* name) {
  const Json& v = field(j, name);
  return v.is_string() ? v.get<std::string>() : "";
}

// The condition of `type` in status.conditions, null when absent.
const Json& condition(const Json& object, std::string_view type) {
  static const Json null;
  const Json& conditions = field(field(object, "status"), "conditions");
  if (conditions.is_array()) {
    for (const Json& c : conditions) {
      if (text(c, "type") == type) {
        return c;
      }
    }
  }
  return null;
}

int64_t spec_replicas(const Json& object) {
  const Json& spec = field(object, "spec");
  return spec.contains("replicas") ? number(spec, "replicas") : 1;
}

// What starts a rollout: the pod template, and a Rollout's spec.restartAt (`kubectl argo
// rollouts restart` replaces the pods without touching the template).
size_t template_hash(const Json& object) {
  const Json& spec = field(object, "spec");
  return std::hash<std::string>{}(field(spec, "template").dump() + field(spec, "restartAt").dump());
}

// A StatefulSet's spec.updateStrategy.rollingUpdate.partition (0 for other kinds).
int64_t partition(const Json& object) {
  return number(field(field(field(object, "spec"), "updateStrategy"), "rollingUpdate"),
                "partition");
}

kube::WorkloadKind kind_of(const Json& object) {
  std::string kind = text(object, "kind");
  for (size_t i = 0; i < kube::kWorkloadKindNames.size(); ++i) {
    if (kube::kWorkloadKindNames[i] == kind) {
      return static_cast<kube::WorkloadKind>(i);
    }
  }
  return kube::WorkloadKind::deployment;
}

// status.observedGeneration: a number, or (Argo Rollouts) a string holding one; a Rollout's
// older non-numeric hash reads as observed (nullopt), as Argo's own client reads it.
std::optional<int64_t> observed_generation(const Json& status) {
  const Json& v = field(status, "observedGeneration");
  if (v.is_number_integer()) {
    return v.get<int64_t>();
  }
  if (v.is_string()) {
    const std::string& s = v.get_ref<const std::string&>();
    if (!s.empty() && s.find_first_not_of("0123456789") == std::string::npos && s.size() < 18) {
      return std::stoll(s);
    }
    return std::nullopt;
  }
  return 0;
}

kube::RolloutStatusView status_view(const Json& object) {
  kube::RolloutStatusView v;
  const Json& spec = field(object, "spec");
  const Json& status = field(object, "status");
  v.kind = kind_of(object);
  v.generation = number(field(object, "metadata"), "generation");
  v.observed_generation = observed_generation(status);
  v.paused = field(spec, "paused") == true;
  if (v.kind == kube::WorkloadKind::daemon_set) {
    v.desired = number(status, "desiredNumberScheduled");
    v.replicas = number(status, "currentNumberScheduled");
    v.updated = number(status, "updatedNumberScheduled");
    v.ready = number(status, "numberReady");
    v.available = number(status, "numberAvailable");
  } else {
    v.desired = spec_replicas(object);
    v.replicas = number(status, "replicas");
    v.updated = number(status, "updatedReplicas");
    v.ready = number(status, "readyReplicas");
    v.available = number(status, "availableReplicas");
  }
  const Json& strategy = field(spec, "updateStrategy");
  v.update_strategy = text(strategy, "type");
  v.partition = partition(object);
  v.current_revision = text(status, "currentRevision");
  v.update_revision = text(status, "updateRevision");
  const Json& progressing = condition(object, "Progressing");
  v.progressing_reason = text(progressing, "reason");
  v.progressing_message = text(progressing, "message");
  v.phase = text(status, "phase");
  v.phase_message = text(status, "message");
  v.current_pod_hash = text(status, "currentPodHash");
  v.stable_rs = text(status, "stableRS");
  return v;
}

}  // namespace

std::string WorkloadKey::text() const {
  std::string short_kind = kind == "Deployment"    ? "deploy"
                           : kind == "StatefulSet" ? "sts"
                           : kind == "DaemonSet"   ? "ds"
                           : kind == "Rollout"     ? "rollout"
                                                   : kind;
  return fmt::format("{}/{} in {}", short_kind, name, namespace_name);
}

std::string_view api_version(std::string_view kind) {
  return kind == "Rollout" ? "argoproj.io/v1alpha1" : "apps/v1";
}

std::string_view to_string(RolloutEnd end) {
  switch (end) {
    case RolloutEnd::complete:
      return "complete";
    case RolloutEnd::failed:
      return "failed";
    case RolloutEnd::paused:
      return "paused";
    case RolloutEnd::superseded:
      return "superseded";
    case RolloutEnd::deleted:
      return "deleted";
    case RolloutEnd::unfinished:
      return "unfinished";
  }
  return "complete";
}

Json trim_workload(const Json& object) {
  Json out = object;
  if (out.is_object() && out.contains("metadata") && out["metadata"].is_object()) {
    Json& meta = out["metadata"];
    meta.erase("managedFields");
    meta.erase("annotations");
  }
  return out;
}

WorkloadKey workload_key(const Json& object) {
  const Json& meta = field(object, "metadata");
  return {std::string(kube::to_string(kind_of(object))), text(meta, "namespace"),
          text(meta, "name")};
}

kube::RolloutStatus rollout_status(const Json& object) {
  return kube::rollout_status(status_view(object));
}

bool rollout_in_progress(const Json& object) {
  return rollout_status(object).state == kube::RolloutState::rolling;
}

std::optional<RolloutEnd> rollout_ended(const Json& object, std::string& reason) {
  kube::RolloutStatus s = rollout_status(object);
  reason = s.why;
  switch (s.state) {
    case kube::RolloutState::complete:
      return RolloutEnd::complete;
    case kube::RolloutState::failed:
      return RolloutEnd::failed;
    case kube::RolloutState::paused:
      return RolloutEnd::paused;
    default:
      return std::nullopt;
  }
}

std::vector<RolloutChange> RolloutTracker::on_object(const Json& object, Source source) {
  std::vector<RolloutChange> out;
  WorkloadKey key = workload_key(object);
  auto it = seen_.find(key);
  size_t now_template = template_hash(object);
  if (it == seen_.end()) {
    Seen& seen = seen_[key];
    seen.template_hash = now_template;
    seen.object = object;
    // Generation 1 is the first template: pods coming up are the Deployment's creation.
    if (source == Source::listed && number(field(object, "metadata"), "generation") > 1
        && rollout_in_progress(object)) {
      seen.rolling = true;
      out.push_back({RolloutChange::Type::started, key, false, RolloutEnd::complete,
                     "under way when watch first saw it", object, Json()});
    }
    return out;
  }
  Seen& seen = it->second;
  if (now_template != seen.template_hash) {
    if (seen.rolling) {
      out.push_back({RolloutChange::Type::ended, key, true, RolloutEnd::superseded,
                     "the pod template changed again", object, Json()});
    }
    kube::RolloutStatus status = rollout_status(object);
    bool manual = status.state == kube::RolloutState::manual;
    out.push_back({manual ? RolloutChange::Type::skipped : RolloutChange::Type::started, key, true,
                   RolloutEnd::complete,
                   fmt::format("the pod template changed (generation {}){}",
                               number(field(object, "metadata"), "generation"),
                               manual ? "; " + status.why : ""),
                   object, seen.object});
    seen.rolling = !manual;
    seen.template_hash = now_template;
  } else if (!seen.rolling && partition(object) < partition(seen.object)) {
    // A StatefulSet's partition lowered: the controller updates the pods down to it, a rollout
    // of the template already in place (a staged or canary StatefulSet's next stage).
    out.push_back({RolloutChange::Type::started, key, true, RolloutEnd::complete,
                   fmt::format("the partition was lowered from {} to {} (generation {})",
                               partition(seen.object), partition(object),
                               number(field(object, "metadata"), "generation")),
                   object, seen.object});
    seen.rolling = true;
  }
  seen.object = object;
  std::string reason;
  if (seen.rolling) {
    if (std::optional<RolloutEnd> end = rollout_ended(object, reason)) {
      out.push_back({RolloutChange::Type::ended, key, true, *end, reason, object, Json()});
      seen.rolling = false;
    }
  }
  return out;
}

std::vector<RolloutChange> RolloutTracker::on_deleted(const Json& object) {
  std::vector<RolloutChange> out;
  WorkloadKey key = workload_key(object);
  auto it = seen_.find(key);
  if (it == seen_.end()) {
    return out;
  }
  if (it->second.rolling) {
    out.push_back({RolloutChange::Type::ended, key, true, RolloutEnd::deleted,
                   "the workload was deleted", object, Json()});
  }
  seen_.erase(it);
  return out;
}

std::vector<RolloutChange> RolloutTracker::on_relisted(std::string_view kind,
                                                       const std::vector<WorkloadKey>& listed) {
  std::set<WorkloadKey> keep(listed.begin(), listed.end());
  std::vector<RolloutChange> out;
  std::vector<Json> gone;
  for (const auto& [key, seen] : seen_) {
    if (key.kind == kind && !keep.contains(key)) {
      gone.push_back(seen.object);
    }
  }
  for (const Json& object : gone) {
    for (RolloutChange& c : on_deleted(object)) {
      out.push_back(std::move(c));
    }
  }
  return out;
}

bool RolloutTracker::in_rollout(const WorkloadKey& key) const {
  auto it = seen_.find(key);
  return it != seen_.end() && it->second.rolling;
}

}  // namespace zerodrop::watch
