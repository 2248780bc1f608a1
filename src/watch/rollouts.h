#pragma once

#include <map>
#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

namespace zerodrop::watch {

// A workload: kind ("Deployment"), namespace and name.
struct WorkloadKey {
  std::string kind;
  std::string namespace_name;
  std::string name;

  auto operator<=>(const WorkloadKey&) const = default;
  std::string text() const;  // "deploy/web in default"
};

// How a rollout ended, as the controller reports it (or why watch stopped following it).
// unfinished: watch stopped (or lost its lease) before the controller reported an end.
enum class RolloutEnd { complete, failed, paused, superseded, deleted, unfinished };

std::string_view to_string(RolloutEnd end);

// A rollout began or ended.
struct RolloutChange {
  enum class Type { started, ended } type = Type::started;
  WorkloadKey key;
  // started: watch saw it begin (false: it was under way when watch first saw the workload, so
  // its beginning was missed and the measurement can only be partial).
  bool whole = true;
  RolloutEnd end = RolloutEnd::complete;  // ended
  std::string reason;                     // one line: what showed the start or the end
  nlohmann::json object;                  // the workload as last seen
  nlohmann::json before;                  // started and whole: the workload before the change
};

// The Deployment rollout rules, from the objects alone:
// * starts when spec.template changes (a new generation whose template differs: `kubectl rollout
//   restart` and `set image` do; a scale does not), or, for a workload seen for the first time
//   (watch started, or a relist) past generation 1, when its status says a rollout is under way
//   (observedGeneration behind, the Progressing condition not NewReplicaSetAvailable, replicas
//   not all updated): then `whole` is false;
// * ends when the controller has observed the generation and reports Progressing
//   NewReplicaSetAvailable with every replica updated (complete), Progressing False
//   ProgressDeadlineExceeded (failed), spec.paused (paused); a new template change ends it as
//   superseded and starts the next; the workload's deletion ends it.
// Pure and not thread-safe: the caller feeds it the watch's objects in order.
class RolloutTracker {
public:
  // An object from a list (the first, or a relist after 410 Gone: `listed`) or an ADDED/MODIFIED
  // event. A workload first seen through ADDED is a new one: its first pods are no rollout.
  enum class Source { listed, event };
  std::vector<RolloutChange> on_object(const nlohmann::json& object, Source source);
  std::vector<RolloutChange> on_deleted(const nlohmann::json& object);
  // Deployments no longer listed by a relist are deleted ones.
  std::vector<RolloutChange> on_relisted(const std::vector<WorkloadKey>& listed);

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

// A Deployment without what watch never reads (managedFields, annotations such as
// last-applied-configuration): informers keep every workload, so this is most of their memory.
nlohmann::json trim_workload(const nlohmann::json& object);

// The key of a Deployment object.
WorkloadKey deployment_key(const nlohmann::json& object);

// Whether a Deployment's status says its rollout is under way; and, when it has ended, how.
bool deployment_in_progress(const nlohmann::json& object);
std::optional<RolloutEnd> deployment_ended(const nlohmann::json& object, std::string& reason);

}  // namespace zerodrop::watch
