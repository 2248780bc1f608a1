#include "audit/rule.h"

#include <array>

namespace zerodrop::audit {
namespace {

using record::Hole;
namespace id = rule_id;

constexpr std::array kRules = {
    RuleInfo{id::kPreStopMissing, Hole::deregistration_race, Severity::error,
             "a container that takes traffic has no preStop delay",
             "SIGTERM arrives while kube-proxy, ingresses and load balancers still route to the "
             "pod: new connections are refused (502)"},
    RuleInfo{id::kPreStopBinaryMissing, Hole::deregistration_race, Severity::error,
             "an exec preStop runs a shell or sleep the image does not have",
             "distroless, scratch-based and chainguard images ship no /bin/sh and no sleep: the "
             "hook fails at once and SIGTERM follows with no delay"},
    RuleInfo{id::kPreStopTooShort, Hole::deregistration_race, Severity::warning,
             "the preStop delay is shorter than endpoint propagation (--propagation)",
             "routers that apply the endpoint change after the delay still send connections to a "
             "process that has stopped accepting"},
    RuleInfo{id::kPreStopUnknownDelay, Hole::deregistration_race, Severity::info,
             "the preStop hook's duration cannot be read from the manifest",
             "only a hook that waits at least the propagation time closes the race"},
    RuleInfo{id::kGraceTooShort, Hole::grace_overrun, Severity::warning,
             "terminationGracePeriodSeconds is below preStop + drain + margin",
             "SIGKILL arrives at the end of the grace period and cuts the requests still draining"},
    RuleInfo{id::kSleepNotBelowGrace, Hole::grace_overrun, Severity::error,
             "a native preStop sleep is not shorter than the grace period",
             "the API server rejects the pod (sleep must be less than "
             "terminationGracePeriodSeconds); an older one SIGKILLs during the sleep"},
    RuleInfo{id::kReadinessMissing, Hole::readiness_lies, Severity::error,
             "a container that takes traffic has no readiness probe",
             "a new pod is routed as soon as it starts, before it can serve; nothing takes a "
             "draining pod out of rotation"},
    RuleInfo{id::kReadinessTcpOnHttp, Hole::readiness_lies, Severity::warning,
             "a tcpSocket readiness probe on a port that serves HTTP",
             "the port accepts connections before the app can answer requests: the pod is routed "
             "too early"},
    RuleInfo{id::kProbesIdentical, Hole::liveness_kills_drain, Severity::warning,
             "the liveness probe checks the same handler as the readiness probe",
             "when the app fails readiness to shed load or to drain, liveness fails too and the "
             "kubelet restarts it with requests in flight"},
    RuleInfo{id::kLivenessAggressive, Hole::liveness_kills_drain, Severity::warning,
             "a liveness probe that kills the container after a short stall",
             "a load spike or GC pause longer than periodSeconds x failureThreshold restarts "
             "healthy pods, dropping their requests and the capacity of the rest"},
    RuleInfo{id::kMaxUnavailable, Hole::capacity_dip, Severity::warning,
             "maxUnavailable takes away more capacity than the headroom (--headroom)",
             "during the rollout fewer pods serve than the load needs: timeouts and 503s"},
    RuleInfo{id::kRecreateOutage, Hole::capacity_dip, Severity::error,
             "strategy Recreate on a workload a Service sends traffic to",
             "every rollout stops all pods before starting new ones: a full outage"},
    RuleInfo{id::kAllUnavailable, Hole::capacity_dip, Severity::error,
             "a DaemonSet's or StatefulSet's maxUnavailable takes every pod at once",
             "every rollout takes all pods out of service together: a full outage"},
    RuleInfo{id::kTooFewReplicas, Hole::capacity_dip, Severity::warning,
             "fewer than 2 replicas (HPA minReplicas counts as the floor)",
             "a single pod: every restart, eviction or node drain is an outage"},
    RuleInfo{id::kPdbMissing, Hole::capacity_dip, Severity::warning,
             "no PodDisruptionBudget selects a workload of 2 or more replicas",
             "a node drain may evict every replica at once"},
    RuleInfo{id::kPdbBlocksEviction, Hole::capacity_dip, Severity::warning,
             "a PodDisruptionBudget that allows no eviction at all",
             "node drains hang until someone deletes the PDB by hand, then evict without it"},
    RuleInfo{id::kNoTraffic, std::nullopt, Severity::info,
             "no Service sends the workload client traffic (none selects it, or only metrics "
             "Services do): traffic rules skipped",
             "a workload that takes no client traffic through a Service cannot drop requests"},
    RuleInfo{id::kInvalidManifest, std::nullopt, Severity::error,
             "the input is not valid YAML or not a valid Kubernetes object",
             "what cannot be read cannot be audited (nor applied)"},
    // SQL migrations: the old version keeps serving against the schema the new one migrates.
    RuleInfo{id::kSqlDropColumn, Hole::schema_race, Severity::error, "a migration drops a column",
             "the version still running selects or writes it"},
    RuleInfo{id::kSqlDropTable, Hole::schema_race, Severity::error, "a migration drops a table",
             "the version still running reads or writes it"},
    RuleInfo{id::kSqlRenameColumn, Hole::schema_race, Severity::error,
             "a migration renames a column in one step",
             "the version still running uses the old name"},
    RuleInfo{id::kSqlRenameTable, Hole::schema_race, Severity::error,
             "a migration renames a table in one step",
             "the version still running uses the old name"},
    RuleInfo{id::kSqlAddColumnNotNull, Hole::schema_race, Severity::error,
             "a migration adds a NOT NULL column without a DEFAULT",
             "the running version's INSERTs do not name the column and fail"},
    RuleInfo{id::kSqlAlterColumnType, Hole::schema_race, Severity::error,
             "a migration changes a column's type",
             "the table is rewritten under an exclusive lock, and the running version writes the "
             "old type"},
    RuleInfo{id::kSqlSetNotNull, Hole::schema_race, Severity::warning,
             "a migration sets NOT NULL on an existing column",
             "a running version that leaves the column empty fails on insert; the check scans the "
             "table under an exclusive lock"},
    RuleInfo{id::kSqlConstraintValidated, Hole::capacity_dip, Severity::warning,
             "a CHECK or FOREIGN KEY constraint is added without NOT VALID",
             "every row is checked while writes to the table wait"},
    RuleInfo{id::kSqlLockingIndex, Hole::capacity_dip, Severity::warning,
             "an index is created, dropped or rebuilt without CONCURRENTLY",
             "writes to the table wait until the index is built; requests time out meanwhile"},
    RuleInfo{id::kSqlTableRewrite, Hole::capacity_dip, Severity::warning,
             "a statement rewrites a whole table (VACUUM FULL, CLUSTER, ADD COLUMN that fills "
             "every row)",
             "every read and write of the table waits for the rewrite"},
    RuleInfo{id::kInvalidMigration, std::nullopt, Severity::error,
             "a migration PostgreSQL cannot parse",
             "what cannot be read cannot be audited (nor applied)"},
};

}  // namespace

std::span<const RuleInfo> rules() {
  return kRules;
}

const RuleInfo* find_rule(std::string_view rule) {
  for (const RuleInfo& r : kRules) {
    if (r.id == rule) {
      return &r;
    }
  }
  return nullptr;
}

}  // namespace zerodrop::audit
