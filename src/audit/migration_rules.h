#pragma once
// The migration rules: one parsed statement (libpg_query's JSON tree) to its findings.

#include <set>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "audit/finding.h"

namespace zerodrop::audit {

// One statement of a migration file: where it starts and its parse tree ({"AlterTableStmt": …}).
struct Statement {
  const std::string& file;
  kube::Mark mark;
  const nlohmann::json& tree;
};

// What earlier statements of the same file did: the tables they created, on which nothing is
// flagged (no running version reads a table that did not exist before this migration).
struct MigrationContext {
  std::set<std::string, std::less<>> created_tables;  // "schema.table" or "table"
};

std::vector<Finding> check_statement(const Statement& statement, MigrationContext& context);

}  // namespace zerodrop::audit
