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

size_t template_hash(const Json& object) {
  return std::hash<std::string>{}(field(field(object, "spec"), "template").dump());
}

}  // namespace

std::string WorkloadKey::text() const {
  std::string short_kind = kind == "Deployment" ? "deploy" : kind;
  return fmt::format("{}/{} in {}", short_kind, name, namespace_name);
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

WorkloadKey deployment_key(const Json& object) {
  const Json& meta = field(object, "metadata");
  return {"Deployment", text(meta, "namespace"), text(meta, "name")};
}

bool deployment_in_progress(const Json& object) {
  const Json& status = field(object, "status");
  if (field(field(object, "spec"), "paused") == true) {
    return false;
  }
  int64_t generation = number(field(object, "metadata"), "generation");
  if (number(status, "observedGeneration") < generation) {
    return true;
  }
  const Json& progressing = condition(object, "Progressing");
  if (text(progressing, "reason") == "ProgressDeadlineExceeded") {
    return false;
  }
  if (!progressing.is_null() && text(progressing, "reason") != "NewReplicaSetAvailable") {
    return true;
  }
  int64_t wanted = spec_replicas(object);
  return number(status, "updatedReplicas") < wanted || number(status, "replicas") > wanted;
}

std::optional<RolloutEnd> deployment_ended(const Json& object, std::string& reason) {
  const Json& meta = field(object, "metadata");
  const Json& status = field(object, "status");
  if (field(field(object, "spec"), "paused") == true) {
    reason = "spec.paused is true";
    return RolloutEnd::paused;
  }
  int64_t generation = number(meta, "generation");
  if (number(status, "observedGeneration") < generation) {
    return std::nullopt;
  }
  const Json& progressing = condition(object, "Progressing");
  std::string why = text(progressing, "reason");
  if (why == "ProgressDeadlineExceeded") {
    reason = "Progressing False, ProgressDeadlineExceeded: " + text(progressing, "message");
    return RolloutEnd::failed;
  }
  int64_t wanted = spec_replicas(object);
  bool all_updated =
      number(status, "updatedReplicas") == wanted && number(status, "replicas") == wanted;
  if (why == "NewReplicaSetAvailable" && all_updated) {
    reason = fmt::format("Progressing NewReplicaSetAvailable, {} of {} updated", wanted, wanted);
    return RolloutEnd::complete;
  }
  return std::nullopt;
}

std::vector<RolloutChange> RolloutTracker::on_object(const Json& object, Source source) {
  std::vector<RolloutChange> out;
  WorkloadKey key = deployment_key(object);
  auto it = seen_.find(key);
  size_t now_template = template_hash(object);
  if (it == seen_.end()) {
    Seen& seen = seen_[key];
    seen.template_hash = now_template;
    seen.object = object;
    // Generation 1 is the first template: pods coming up are the Deployment's creation.
    if (source == Source::listed && number(field(object, "metadata"), "generation") > 1
        && deployment_in_progress(object)) {
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
    out.push_back({RolloutChange::Type::started, key, true, RolloutEnd::complete,
                   fmt::format("the pod template changed (generation {})",
                               number(field(object, "metadata"), "generation")),
                   object, seen.object});
    seen.rolling = true;
    seen.template_hash = now_template;
  }
  seen.object = object;
  std::string reason;
  if (seen.rolling) {
    if (std::optional<RolloutEnd> end = deployment_ended(object, reason)) {
      out.push_back({RolloutChange::Type::ended, key, true, *end, reason, object, Json()});
      seen.rolling = false;
    }
  }
  return out;
}

std::vector<RolloutChange> RolloutTracker::on_deleted(const Json& object) {
  std::vector<RolloutChange> out;
  WorkloadKey key = deployment_key(object);
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

std::vector<RolloutChange> RolloutTracker::on_relisted(const std::vector<WorkloadKey>& listed) {
  std::set<WorkloadKey> keep(listed.begin(), listed.end());
  std::vector<RolloutChange> out;
  std::vector<Json> gone;
  for (const auto& [key, seen] : seen_) {
    if (!keep.contains(key)) {
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
