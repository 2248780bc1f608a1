#pragma once

#include <string>
#include <string_view>
#include <vector>

#include "audit/finding.h"
#include "audit/schema_history.h"

namespace zerodrop::audit {

// SQL migrations in the audit: during a rolling update the old version keeps serving against the
// schema the new one migrates, so every statement is judged by what it does to the version still
// running (schema-race) and to the table's availability while it holds its lock (capacity-dip).
// Statements are parsed by libpg_query, PostgreSQL's own parser.

// True for a path the audit reads as a migration: "*.sql", except golang-migrate's "*.down.sql"
// and Flyway's undo files "U<version>__*.sql" (they run on rollback, not on deploy).
bool is_migration_file(std::string_view path);

// The inputs of one audit: manifest paths for the Kubernetes loader (files, "-", folders that
// hold manifests) and migration files in the order they apply. A folder's *.sql files are found
// recursively and sorted; a folder holding migrations but no manifest is not passed on.
struct AuditInputs {
  std::vector<std::string> manifests;
  std::vector<std::string> migrations;
};

AuditInputs split_inputs(const std::vector<std::string>& paths);

// `files` in the order the tools apply them: version numbers compared as numbers ("V2__" before
// "V10__", "2_x.up.sql" before "10_x.up.sql"), Flyway's repeatable "R__*.sql" last.
void sort_migrations(std::vector<std::string>& files);

// The findings of one migration file's statements. `file` names it in every finding; `text` is
// its content. A statement on a table the same file creates is not flagged (no version uses that
// table yet), and `-- zerodrop:ignore RULE[,RULE]` in the comments before a statement ignores
// those rules for it. A file PostgreSQL cannot parse is one invalid-migration finding at the
// parser's position. Go template actions ({{ .Schema }}) are read as names. A table swap (RENAME
// t TO t_old, CREATE TABLE t) is not a rename of t. Column types go to and come from `history`,
// shared by the files of one audit in the order they apply, so a type change is judged against
// the column's real old type.
std::vector<Finding> audit_migration(const std::string& file, std::string_view text,
                                     SchemaHistory& history);
std::vector<Finding> audit_migration(const std::string& file, std::string_view text);

}  // namespace zerodrop::audit
