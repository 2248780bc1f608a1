// capacity-dip rules.
#include <fmt/format.h>

#include "audit/rule.h"
#include "audit/rules.h"
#include "audit/traffic.h"
#include "base/parse.h"
#include "kube/rollout.h"

namespace zerodrop::audit {
namespace {

using kube::Workload;
namespace id = rule_id;

std::string labels_text(const kube::Labels& labels) {
  std::vector<std::string> pairs;
  for (const auto& [k, v] : labels) {
    pairs.push_back(k + "=" + v);
  }
  return fmt::format("{{{}}}", fmt::join(pairs, ","));
}

int64_t scaled(const std::string& value, int64_t total, Round round) {
  return parse_int_or_percent(value, "int-or-percent", total, round);
}

void check_replicas(const WorkloadView& view, Findings& out) {
  const Workload& w = *view.workload;
  int64_t floor = view.replica_floor();
  if (floor >= 2 || (w.replicas && *w.replicas == 0)) {
    return;  // replicas: 0 is a deliberate scale-to-zero
  }
  if (!runs_alone(w, floor).empty()) {
    return;  // more replicas are no fix for what must run as one pod
  }
  std::string fix = "set spec.replicas: 2 (or more)";
  Finding f = make_finding(id::kTooFewReplicas, w, nullptr, w.marks.at("spec.replicas"), "", "");
  if (w.kind == kube::WorkloadKind::pod) {
    f.message =
        "a bare Pod is a single replica that nothing replaces: every restart or "
        "eviction is an outage";
    fix = "run it from a Deployment with replicas: 2 or more";
  } else if (w.replicas) {
    f.message =
        fmt::format("replicas {}: every restart, eviction or node drain is an outage", *w.replicas);
  } else if (view.hpa) {
    f.file = view.hpa->meta.file;
    f.mark = view.hpa->meta.marks.at("minReplicas");
    f.message = fmt::format(
        "HorizontalPodAutoscaler '{}' minReplicas {} is the replica floor: "
        "at the floor every restart or eviction is an outage",
        view.hpa->meta.name, floor);
    fix = fmt::format("set minReplicas: 2 in HorizontalPodAutoscaler '{}'", view.hpa->meta.name);
  } else {
    f.message = "replicas not set and no HorizontalPodAutoscaler: Kubernetes runs 1 replica";
  }
  f.fix = fix;
  out.push_back(std::move(f));
}

void check_unavailable(const WorkloadView& view, const Options& o, Findings& out) {
  const Workload& w = *view.workload;
  const kube::Strategy& s = w.strategy;
  if (!s.max_unavailable
      || (w.kind != kube::WorkloadKind::deployment && w.kind != kube::WorkloadKind::rollout)) {
    return;  // StatefulSets cannot surge: their one-at-a-time dip is structural
  }
  int64_t replicas = view.replica_floor();
  int64_t unavailable = kube::resolve_limits(s.max_surge.value_or(IntOrPercent::count(0)),
                                             *s.max_unavailable, static_cast<int>(replicas))
                            .max_unavailable;
  if (replicas == 0 || static_cast<double>(unavailable) <= o.headroom * replicas) {
    return;
  }
  bool written = s.marks.has("maxUnavailable");
  out.push_back(make_finding(
      id::kMaxUnavailable, w, nullptr,
      written ? s.marks.at("maxUnavailable") : w.marks.at("spec.strategy"),
      fmt::format("maxUnavailable {}{} takes {} of {} replicas out of service during the rollout "
                  "({:.0f}% of capacity, more than the {:.0f}% headroom, --headroom)",
                  s.max_unavailable->to_string(), written ? "" : " (default)", unavailable,
                  replicas, 100.0 * unavailable / replicas, 100 * o.headroom),
      "set strategy.rollingUpdate: {maxUnavailable: 0, maxSurge: 1}"));
}

// Rollouts that take every pod down at once: Recreate, or a maxUnavailable that covers them all.
void check_full_outage(const WorkloadView& view, Findings& out) {
  const Workload& w = *view.workload;
  const kube::Strategy& s = w.strategy;
  if (s.type == "Recreate" && w.kind == kube::WorkloadKind::deployment) {
    if (!runs_alone(w, view.replica_floor()).empty()) {
      return;  // two pods must never run together: the outage is the price, not a hole
    }
    out.push_back(make_finding(
        id::kRecreateOutage, w, nullptr, s.marks.at("type"),
        "strategy Recreate stops every pod before the new ones start: each rollout is a full "
        "outage for the Services that route to it",
        "use RollingUpdate with maxUnavailable: 0, maxSurge: 1; if Recreate is there for a "
        "ReadWriteOnce volume, keep it and accept (ignore) the outage, or move to a StatefulSet"));
    return;
  }
  bool daemon = w.kind == kube::WorkloadKind::daemon_set;
  if (!s.max_unavailable || (!daemon && w.kind != kube::WorkloadKind::stateful_set)) {
    return;
  }
  const IntOrPercent& max_unavailable = *s.max_unavailable;
  // A DaemonSet's percentage is of its nodes, unknown here: only 100% is sure to take all.
  bool all = daemon ? max_unavailable.unit() == IntOrPercent::Unit::percent
                          && max_unavailable.resolve(100, Round::down) >= 100
                    : view.replica_floor() >= 2  // one replica: replicas-too-few says it
                          && max_unavailable.resolve(view.replica_floor(), Round::down)
                                 >= view.replica_floor();
  if (!all) {
    return;
  }
  bool written = s.marks.has("maxUnavailable");
  out.push_back(make_finding(
      id::kAllUnavailable, w, nullptr,
      written ? s.marks.at("maxUnavailable") : w.marks.at("spec.strategy"),
      daemon ? fmt::format("maxUnavailable {} updates the pods of every node at once: each "
                           "rollout is a full outage for the Services that route to it",
                           max_unavailable.to_string())
             : fmt::format("maxUnavailable {} with {} replicas updates every pod at once: each "
                           "rollout is a full outage for the Services that route to it",
                           max_unavailable.to_string(), view.replica_floor()),
      "set updateStrategy.rollingUpdate.maxUnavailable: 1"));
}

void check_pdbs(const WorkloadView& view, Findings& out) {
  const Workload& w = *view.workload;
  int64_t replicas = view.replica_floor();
  if (w.kind == kube::WorkloadKind::daemon_set || w.kind == kube::WorkloadKind::pod) {
    return;
  }
  if (view.pdbs.empty() && replicas >= 2) {
    out.push_back(make_finding(
        id::kPdbMissing, w, nullptr, w.meta.marks.self,
        fmt::format("no PodDisruptionBudget selects pods {} ({} replicas): a node drain may "
                    "evict all of them at once",
                    labels_text(w.pod_labels), replicas),
        "add a PodDisruptionBudget with maxUnavailable: 1 and the workload's selector"));
  }
  for (const kube::PodDisruptionBudget* p : view.pdbs) {
    int64_t allowed = 0;
    std::string policy;
    kube::Mark at = p->meta.marks.self;
    if (p->max_unavailable) {
      allowed = scaled(*p->max_unavailable, replicas, Round::up);
      policy = "maxUnavailable " + *p->max_unavailable;
      at = p->meta.marks.at("spec.maxUnavailable");
    } else if (p->min_available) {
      allowed = replicas - scaled(*p->min_available, replicas, Round::up);
      policy = "minAvailable " + *p->min_available;
      at = p->meta.marks.at("spec.minAvailable");
    } else {
      continue;
    }
    if (allowed > 0) {
      continue;
    }
    Finding f = make_finding(
        id::kPdbBlocksEviction, w, nullptr, at,
        fmt::format("PodDisruptionBudget '{}' {} with {} replicas allows no eviction: node drains "
                    "hang",
                    p->meta.name, policy, replicas),
        replicas >= 2 ? "set maxUnavailable: 1 in the PodDisruptionBudget"
        : runs_alone(w, replicas).empty()
            ? "run 2 or more replicas, then set maxUnavailable: 1"
            : "it must run as one pod: set maxUnavailable: 1 and accept the restart a drain "
              "brings");
    f.file = p->meta.file;
    out.push_back(std::move(f));
  }
}

}  // namespace

Findings check_capacity(const WorkloadView& view, const Options& o) {
  Findings out;
  const Workload& w = *view.workload;
  check_full_outage(view, out);
  if (w.kind == kube::WorkloadKind::daemon_set) {
    return out;  // one pod per node: replicas, surge and PDB follow the nodes
  }
  check_replicas(view, out);
  check_unavailable(view, o, out);
  check_pdbs(view, out);
  return out;
}

}  // namespace zerodrop::audit
