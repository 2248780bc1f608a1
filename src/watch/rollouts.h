#pragma once

#include <map>
#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "kube/rollout_status.h"

namespace zerodrop::watch {

// A workload: kind ("Deployment", "StatefulSet", "DaemonSet" or "Rollout"), namespace and name.
struct WorkloadKey {
  std::string kind;
  std::string namespace_name;
  std::string name;

  auto operator<=>(const WorkloadKey&) const = default;
  std::string text() const;  // "deploy/web in default", "sts/db in shop"
};

// The apiVersion of a workload kind ("apps/v1"; "argoproj.io/v1alpha1" for a Rollout).
std::string_view api_version(std::string_view kind);

// How a rollout ended, as the controller reports it (or why watch stopped following it).
// unfinished: watch stopped (or lost its lease) before the controller reported an end.
enum class RolloutEnd { complete, failed, paused, superseded, deleted, unfinished };

std::string_view to_string(RolloutEnd end);

// A rollout began or ended.
struct RolloutChange {
  // skipped: the pod template changed, but the controller replaces no pod by itself
  // (updateStrategy OnDelete), so there is no rollout to measure; `reason` says so.
  enum class Type { started, ended, skipped } type = Type::started;
  WorkloadKey key;
  // started: watch saw it begin (false: it was under way when watch first saw the workload, so
  // its beginning was missed and the measurement can only be partial).
  bool whole = true;
  RolloutEnd end = RolloutEnd::complete;  // ended
  std::string reason;                     // one line: what showed the start or the end
  nlohmann::json object;                  // the workload as last seen
  nlohmann::json before;                  // started and whole: the workload before the change
};

// The rollout rules of each kind (kube::rollout_status reads the status), from the objects alone:
// * starts when spec.template changes (a new generation whose template differs: `kubectl rollout
//   restart` and `set image` do; a scale does not; a Rollout's spec.restartAt too; a
//   StatefulSet's partition lowered, the next stage of a staged rollout), or, for a
//   workload seen for the first time (watch started, or a relist) past generation 1, when its
//   status says a rollout is under way: then `whole` is false;
// * ends when the controller reports it complete, failed or paused (kube::RolloutState); a new
//   template change ends it as superseded and starts the next; the workload's deletion ends it.
// * a template change under updateStrategy OnDelete is `skipped`: no controller end to measure to.
// Objects carry their "kind" (the caller stamps it on list items, which the API sends without);
// none reads as Deployment.
// Pure and not thread-safe: the caller feeds it the watch's objects in order.
class RolloutTracker {
public:
  // An object from a list (the first, or a relist after 410 Gone: `listed`) or an ADDED/MODIFIED
  // event. A workload first seen through ADDED is a new one: its first pods are no rollout.
  enum class Source { listed, event };
  std::vector<RolloutChange> on_object(const nlohmann::json& object, Source source);
  std::vector<RolloutChange> on_deleted(const nlohmann::json& object);
  // Workloads of `kind` no longer listed by a relist (of that kind's informer) are deleted ones.
  std::vector<RolloutChange> on_relisted(std::string_view kind,
                                         const std::vector<WorkloadKey>& listed);

  bool in_rollout(const WorkloadKey& key) const;

  size_t workloads() const { return seen_.size(); }

private:
  struct Seen {
    size_t template_hash = 0;  // of spec.template, serialized
    nlohmann::json object;
    bool rolling = false;
  };

  std::map<WorkloadKey, Seen> seen_;
};

// A workload without what watch never reads (managedFields, annotations such as
// last-applied-configuration): informers keep every workload, so this is most of their memory.
nlohmann::json trim_workload(const nlohmann::json& object);

// The key of a workload object (its "kind", Deployment when absent).
WorkloadKey workload_key(const nlohmann::json& object);

// What the object's kind and status say of its rollout (kube::rollout_status).
kube::RolloutStatus rollout_status(const nlohmann::json& object);

// Whether a workload's status says its rollout is under way; and, when it has ended, how.
bool rollout_in_progress(const nlohmann::json& object);
std::optional<RolloutEnd> rollout_ended(const nlohmann::json& object, std::string& reason);

}  // namespace zerodrop::watch
