#pragma once

#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

#include "diagnose/diagnose.h"
#include "record/run_record.h"

namespace zerodrop::diagnose {

using record::Micros;

// One run of a schema migration (migration_started, migration_finished): the schema changed at
// some moment in [started, finished].
struct MigrationRun {
  Micros started{0};
  std::optional<Micros> finished;  // absent: still running when the record ends
  std::string what;                // the command, and its SQL when the engine read it
  std::string outcome;             // "exit code 0" and the tail of its output, once finished
};

// Everything the attribution rules ask of a run's events, indexed once. Internal to diagnose.
class Facts {
public:
  explicit Facts(const record::RunRecord& run);

  const std::vector<PodLife>& pods() const { return pods_; }

  const PodLife* pod(std::string_view name) const;

  // When `router` first applied `pod`'s termination (terminating, not ready, or removed) at or
  // after its deletion; nullopt if it never did in the record.
  std::optional<Micros> termination_applied(std::string_view router, std::string_view pod) const;
  // The earliest that apply can have been, when its event is known only to an interval.
  std::optional<Micros> termination_earliest(std::string_view router, std::string_view pod) const;

  // The apply time that counts for a request through `router` (empty: unknown) to `pod`: that
  // router's, or for an unknown router the last router's (the pod had then left every list).
  std::optional<Micros> applied_for(std::string_view router, std::string_view pod) const;

  // Whether `router` recorded a refused connection to `pod` within [from, to].
  bool refused_between(std::string_view router, std::string_view pod, Micros from, Micros to) const;

  // Pods Ready by their probe, not deleted and not exited at `t` (the truth, not a router's view).
  int ready_pods_at(Micros t) const;

  // Endpoints `router` saw as ready at `t` (its last applied conditions); nullopt when the record
  // has no router_applied event for it at all.
  std::optional<int> ready_endpoints_on(std::string_view router, Micros t) const;

  // A router's rule commit: a router_applied event (its pod) or a rule-sync note (its detail).
  struct RuleCommit {
    Micros t{0};
    std::string pod;     // router_applied: the pod whose change it committed
    std::string detail;  // a rule-sync note's detail (record::kRuleSync); empty for an apply
  };

  // The rule commit of `router` nearest to `t` (the earlier of two as near); nullopt when
  // `router` has none.
  std::optional<RuleCommit> nearest_commit(std::string_view router, Micros t) const;

  // The latest endpoint_changed event (the API's EndpointSlice change, any pod) in
  // [t - window, t]; nullptr when there is none.
  const record::Event* change_before(Micros t, Micros window) const;

  // How many requests sent in [from, to] succeeded (through any router, to any pod).
  size_t successes_between(Micros from, Micros to) const;

  // Whether some pod was terminating at `t`: its deletion started at or before `t`, and it had
  // not exited before `t`.
  bool pod_terminating_at(Micros t) const;

  // The router-log notes (record::kRouterLog) of `router`, in time order: the lines a real
  // ingress's own logs have about the run's failures.
  std::vector<const record::Event*> router_log(std::string_view router) const;

  // Routers named by router_applied events, sorted.
  const std::vector<std::string>& routers() const { return routers_; }

  // Every termination's apply time on every router that applied it.
  Propagation propagation() const;

  // The rollout's first and last moment, when the record has them.
  std::optional<Micros> rollout_started() const { return rollout_started_; }

  std::optional<Micros> rollout_finished() const { return rollout_finished_; }

  // The disruption the record states (disruption_started/ended events), if any.
  std::optional<Window> disruption() const;

  // The schema migrations of the run, in time order.
  const std::vector<MigrationRun>& migrations() const { return migrations_; }

  // Whether the record says nothing of pods or routers (a load run): no hole can be named.
  bool traffic_only() const { return pods_.empty() && routers_.empty(); }

private:
  std::vector<PodLife> pods_;
  std::map<std::string, size_t, std::less<>> pod_index_;

  // What the diagnosis reads of a router_applied event.
  struct Apply {
    Micros t;
    std::optional<Micros> t_min;
    std::string router, pod;
    std::optional<record::Conditions> conditions;
  };

  std::vector<Apply> applies_;              // router_applied, in time order
  std::vector<record::Event> refusals_;     // router_refused, in time order
  std::vector<record::Event> changes_;      // endpoint_changed, in time order
  std::vector<record::Event> syncs_;        // rule-sync notes (record::kRuleSync), in time order
  std::vector<record::Event> router_logs_;  // router-log notes (record::kRouterLog), in time order
  std::vector<Micros> successes_;           // send times of the requests that succeeded, sorted
  std::vector<std::string> routers_;
  std::vector<MigrationRun> migrations_;
  std::optional<Micros> rollout_started_, rollout_finished_;
  std::optional<Micros> disruption_started_, disruption_ended_;
  static std::string termination_key(std::string_view router, std::string_view pod);
  std::unordered_map<std::string, Micros> terminations_;  // termination_key -> first apply
  std::unordered_map<std::string, Micros> earliest_;      // termination_key -> its t_min
};

// "4.31 s": how every time in a diagnosis reads (seconds since the run's start).
std::string seconds_text(Micros t);

// "0.80 s", "4.2 ms": how a measured duration reads.
std::string duration_text(Micros d);

// Whether SIGKILL ended the pod's process: a grace or liveness kill, not the end of the run.
bool killed_by_sigkill(const PodLife& life);

// The exit of a process of `life` other than its main one that broke a request in flight from
// `sent` to `done`: the latest such exit in [sent, done] (a few ms of slack: the kernel stamps
// the exit after the process's sockets were closed), unless the main process exited before it.
const ProcessExit* exit_that_broke(const PodLife& life, Micros sent, Micros done);

// What `life` was doing at `t` (see BackendState). After a stop signal that did nothing
// (`signal_ignored`) the pod is still `prestop`: terminating, not stopped, until its kill.
BackendState state_at(const PodLife& life, Micros t);

// When `r` went out: its send time, else the time it was meant to (a request never sent).
Micros send_time(const record::RequestRecord& r);

}  // namespace zerodrop::diagnose
