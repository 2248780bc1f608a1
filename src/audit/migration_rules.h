#pragma once
// The migration rules: one parsed statement (libpg_query's JSON tree) to its findings.

#include <set>
#include <string>
#include <utility>
#include <vector>

#include <nlohmann/json.hpp>

#include "audit/finding.h"
#include "audit/schema_history.h"

namespace zerodrop::audit {

// One statement of a migration file: where it starts and its parse tree ({"AlterTableStmt": …}).
struct Statement {
  const std::string& file;
  kube::Mark mark;
  const nlohmann::json& tree;
};

// What earlier statements did. `created_tables`: the names this file brought into existence
// (CREATE TABLE, RENAME TO), on which nothing is flagged (no running version reads a table that
// did not exist before this migration). `history`: column types from every file read so far.
struct MigrationContext {
  std::set<std::string, std::less<>> created_tables;                // "schema.table" or "table"
  std::vector<std::pair<std::string, std::string>> renamed_tables;  // old, new
  SchemaHistory& history;
};

std::vector<Finding> check_statement(const Statement& statement, MigrationContext& context);

}  // namespace zerodrop::audit
