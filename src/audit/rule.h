#pragma once

#include <optional>
#include <span>
#include <string_view>

#include "audit/finding.h"
#include "record/hole.h"

namespace zerodrop::audit {

// The catalogue entry of a rule: stable id, hole, default severity and its documentation.
struct RuleInfo {
  std::string_view id;
  std::optional<record::Hole> hole;
  Severity severity;
  std::string_view title;  // one line: what is checked
  std::string_view why;    // one line: how it drops requests
};

// Every rule, in the order docs/audit.md lists them.
std::span<const RuleInfo> rules();

// The rule with this id; nullptr for an unknown id.
const RuleInfo* find_rule(std::string_view id);

// Rule ids, as static strings every finding refers to.
namespace rule_id {
inline constexpr std::string_view kPreStopMissing = "prestop-missing";
inline constexpr std::string_view kPreStopBinaryMissing = "prestop-binary-missing";
inline constexpr std::string_view kPreStopTooShort = "prestop-too-short";
inline constexpr std::string_view kPreStopUnknownDelay = "prestop-unknown-delay";
inline constexpr std::string_view kGraceTooShort = "grace-too-short";
inline constexpr std::string_view kSleepNotBelowGrace = "prestop-sleep-not-below-grace";
inline constexpr std::string_view kReadinessMissing = "readiness-missing";
inline constexpr std::string_view kReadinessTcpOnHttp = "readiness-tcp-on-http";
inline constexpr std::string_view kProbesIdentical = "liveness-same-as-readiness";
inline constexpr std::string_view kLivenessAggressive = "liveness-aggressive";
inline constexpr std::string_view kMaxUnavailable = "max-unavailable-capacity";
inline constexpr std::string_view kRecreateOutage = "recreate-outage";
inline constexpr std::string_view kAllUnavailable = "max-unavailable-all";
inline constexpr std::string_view kTooFewReplicas = "replicas-too-few";
inline constexpr std::string_view kPdbMissing = "pdb-missing";
inline constexpr std::string_view kPdbBlocksEviction = "pdb-blocks-eviction";
inline constexpr std::string_view kNoTraffic = "no-traffic";
inline constexpr std::string_view kInvalidManifest = "invalid-manifest";
inline constexpr std::string_view kSqlDropColumn = "sql-drop-column";
inline constexpr std::string_view kSqlDropTable = "sql-drop-table";
inline constexpr std::string_view kSqlRenameColumn = "sql-rename-column";
inline constexpr std::string_view kSqlRenameTable = "sql-rename-table";
inline constexpr std::string_view kSqlAddColumnNotNull = "sql-add-column-not-null";
inline constexpr std::string_view kSqlAlterColumnType = "sql-alter-column-type";
inline constexpr std::string_view kSqlSetNotNull = "sql-set-not-null";
inline constexpr std::string_view kSqlConstraintValidated = "sql-constraint-validated";
inline constexpr std::string_view kSqlLockingIndex = "sql-locking-index";
inline constexpr std::string_view kSqlTableRewrite = "sql-table-rewrite";
inline constexpr std::string_view kInvalidMigration = "invalid-migration";
}  // namespace rule_id

}  // namespace zerodrop::audit
