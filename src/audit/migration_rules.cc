#include "audit/migration_rules.h"

#include <algorithm>
#include <iterator>
#include <optional>
#include <string_view>

#include <fmt/format.h>

#include "audit/rule.h"

namespace zerodrop::audit {
namespace {

using nlohmann::json;
namespace id = rule_id;

// "schema.table" as written, or "table".
std::string table_name(const json& relation) {
  std::string name = relation.value("relname", "");
  std::string schema = relation.value("schemaname", "");
  return schema.empty() ? name : schema + "." + name;
}

// The one-key object {"Kind": {...}}: its kind and body.
std::pair<std::string, const json*> node(const json& wrapped) {
  if (!wrapped.is_object() || wrapped.size() != 1) {
    return {"", nullptr};
  }
  return {wrapped.begin().key(), &wrapped.begin().value()};
}

class Checker {
public:
  Checker(const Statement& s, MigrationContext& context) : s_(s), context_(context) {}

  std::vector<Finding> run() {
    auto [kind, body] = node(s_.tree);
    if (body == nullptr) {
      return {};
    }
    if (kind == "CreateStmt") {
      create_table(*body);
    } else if (kind == "CreateTableAsStmt" && body->value("objtype", "") == "OBJECT_TABLE") {
      const json into = body->value("into", json::object());
      context_.created_tables.insert(table_name(into.value("rel", json::object())));
    } else if (kind == "ViewStmt") {
      // A view under a renamed table's old name keeps the running version working.
      context_.created_tables.insert(table_name(body->value("view", json::object())));
    } else if (kind == "CreateDomainStmt") {
      create_domain(*body);
    } else if (kind == "AlterTableStmt") {
      alter_table(*body);
    } else if (kind == "RenameStmt") {
      rename(*body);
    } else if (kind == "DropStmt") {
      drop(*body);
    } else if (kind == "IndexStmt") {
      index(*body);
    } else if (kind == "ReindexStmt" && !has_option(*body, "params", "concurrently")) {
      add(id::kSqlLockingIndex, "", "REINDEX without CONCURRENTLY locks the table against writes",
          "REINDEX … CONCURRENTLY (PostgreSQL 12+)");
    } else if (kind == "VacuumStmt" && has_option(*body, "options", "full")) {
      add(id::kSqlTableRewrite, "", "VACUUM FULL rewrites the table under an ACCESS EXCLUSIVE lock",
          "plain VACUUM, or pg_repack, which holds the lock only briefly");
    } else if (kind == "ClusterStmt") {
      add(id::kSqlTableRewrite, table_name(body->value("relation", json::object())),
          "CLUSTER rewrites the table under an ACCESS EXCLUSIVE lock",
          "pg_repack --order-by, which holds the lock only briefly");
    }
    return std::move(out_);
  }

private:
  static bool has_option(const json& body, const char* field, std::string_view name) {
    for (const json& option : body.value(field, json::array())) {
      auto [kind, def] = node(option);
      if (kind == "DefElem" && def->value("defname", "") == name) {
        return true;
      }
    }
    return false;
  }

  bool created_here(const std::string& table) const {
    return context_.created_tables.contains(table);
  }

  void add(std::string_view rule, const std::string& table, std::string message, std::string fix) {
    const RuleInfo* info = find_rule(rule);
    Finding f;
    f.rule = info->id;
    f.hole = info->hole;
    f.severity = info->severity;
    f.object = {table.empty() ? "Migration" : "Table", "", table, ""};
    f.file = s_.file;
    f.mark = s_.mark;
    f.message = std::move(message);
    f.fix = std::move(fix);
    out_.push_back(std::move(f));
  }

  void create_table(const json& body) {
    std::string table = table_name(body.value("relation", json::object()));
    context_.created_tables.insert(table);
    context_.history.drop_table(table);
    for (const json& element : body.value("tableElts", json::array())) {
      auto [kind, def] = node(element);
      if (kind == "ColumnDef") {
        context_.history.set(table, def->value("colname", ""),
                             column_type(def->value("typeName", json::object())));
      }
    }
  }

  void create_domain(const json& body) {
    const json names = body.value("domainname", json::array());
    if (!names.empty()) {
      context_.history.add_domain(names.back().value("String", json::object()).value("sval", ""),
                                  column_type(body.value("typeName", json::object())),
                                  !body.value("constraints", json::array()).empty());
    }
  }

  void alter_table(const json& body) {
    std::string table = table_name(body.value("relation", json::object()));
    if (body.value("objtype", "") != "OBJECT_TABLE") {
      return;
    }
    for (const json& wrapped : body.value("cmds", json::array())) {
      auto [kind, cmd] = node(wrapped);
      if (kind == "AlterTableCmd") {
        if (!created_here(table)) {
          alter_table_cmd(table, *cmd);
        }
        remember(table, *cmd);
      }
    }
  }

  // The column types an ALTER TABLE command leaves behind, for later files' type changes.
  void remember(const std::string& table, const json& cmd) {
    std::string subtype = cmd.value("subtype", "");
    const json wrapped = cmd.value("def", json::object());  // node() points into it
    auto [kind, def] = node(wrapped);
    if (subtype == "AT_DropColumn") {
      context_.history.drop_column(table, cmd.value("name", ""));
    } else if (subtype == "AT_AddColumn" && kind == "ColumnDef") {
      context_.history.set(table, def->value("colname", ""),
                           column_type(def->value("typeName", json::object())));
    } else if (subtype == "AT_AlterColumnType" && kind == "ColumnDef") {
      context_.history.set(table, cmd.value("name", ""),
                           column_type(def->value("typeName", json::object())));
    }
  }

  void alter_table_cmd(const std::string& table, const json& cmd) {
    std::string subtype = cmd.value("subtype", "");
    std::string column = cmd.value("name", "");
    if (subtype == "AT_DropColumn") {
      add(id::kSqlDropColumn, table,
          fmt::format("DROP COLUMN {}.{}: the version still running reads or writes it", table,
                      column),
          "contract later: first deploy a version that no longer uses the column (and tell the "
          "ORM to ignore it), then drop it in the next release");
    } else if (subtype == "AT_AddColumn") {
      add_column(table, cmd.value("def", json::object()));
    } else if (subtype == "AT_AlterColumnType") {
      alter_column_type(table, column, cmd.value("def", json::object()));
    } else if (subtype == "AT_SetNotNull") {
      add(id::kSqlSetNotNull, table,
          fmt::format("SET NOT NULL on {}.{}: a running version that leaves it empty fails on "
                      "insert, and the check scans the table under an ACCESS EXCLUSIVE lock",
                      table, column),
          "only once every running version writes the column: ADD CONSTRAINT … CHECK (col IS "
          "NOT NULL) NOT VALID, then VALIDATE CONSTRAINT, then SET NOT NULL (PostgreSQL 12+ "
          "uses the constraint and skips the scan)");
    } else if (subtype == "AT_AddConstraint") {
      add_constraint(table, cmd.value("def", json::object()));
    }
  }

  // Judged against the column's old type when an earlier migration declared it: a widening
  // that changes only the catalog is not flagged; one whose values still fit but that rewrites
  // the table is a capacity dip; anything else (or an unknown old type, or USING) a schema race.
  void alter_column_type(const std::string& table, const std::string& column, const json& wrapped) {
    auto [kind, def] = node(wrapped);
    ColumnType to =
        kind == "ColumnDef" ? column_type(def->value("typeName", json::object())) : ColumnType{};
    bool converts = kind == "ColumnDef" && def->contains("raw_default");
    std::optional<ColumnType> from = context_.history.type_of(table, column);
    const SchemaHistory& history = context_.history;
    TypeChange change = from && !converts ? classify(history.base_of(*from), history.base_of(to))
                                          : TypeChange::breaking;
    std::string was = from ? fmt::format(" (was {})", to_string(*from)) : "";
    if (change == TypeChange::free && history.is_constrained_domain(to) && to != *from) {
      add(id::kSqlConstraintValidated, table,
          fmt::format("ALTER COLUMN {}.{} TYPE {}{}: no rewrite, but every row is checked "
                      "against the domain's constraints while writes to the table wait",
                      table, column, to_string(to), was),
          "first a CHECK constraint with the domain's condition, NOT VALID, then VALIDATE "
          "CONSTRAINT; switch the type when the data is known to pass");
    } else if (change == TypeChange::widening_rewrite) {
      add(id::kSqlTableRewrite, table,
          fmt::format("ALTER COLUMN {}.{} TYPE {}{}: every value the running version writes "
                      "still fits, but the table is rewritten under an ACCESS EXCLUSIVE lock",
                      table, column, to_string(to), was),
          "a new column of the new type filled by the application or a trigger, a batched "
          "backfill, then a short switch; or accept the lock for a small table");
    } else if (change == TypeChange::breaking) {
      add(id::kSqlAlterColumnType, table,
          fmt::format("ALTER COLUMN {}.{} TYPE {}{} rewrites or rechecks the table under an "
                      "ACCESS EXCLUSIVE lock, and the running version writes the old type{}",
                      table, column, to_string(to), was,
                      from || converts ? ""
                                       : " (its old type is in no migration read with this "
                                         "one: audit the whole folder to tell a widening)"),
          "expand/contract: add a column of the new type, write both, backfill, switch reads, "
          "drop the old column in a later release");
    }
  }

  // True when `expr` calls a volatile function: a DEFAULT of it is computed row by row.
  static bool calls_volatile(const json& expr) {
    static constexpr std::string_view kVolatile[] = {
        "random",          "gen_random_uuid", "uuid_generate_v1", "uuid_generate_v4",
        "clock_timestamp", "timeofday",       "nextval"};
    if (expr.is_object()) {
      if (auto call = expr.find("FuncCall"); call != expr.end()) {
        for (const json& part : call->value("funcname", json::array())) {
          std::string name = part.value("String", json::object()).value("sval", "");
          if (std::find(std::begin(kVolatile), std::end(kVolatile), name) != std::end(kVolatile)) {
            return true;
          }
        }
      }
    }
    if (expr.is_structured()) {
      for (const json& child : expr) {
        if (calls_volatile(child)) {
          return true;
        }
      }
    }
    return false;
  }

  static bool is_serial(const json& column) {
    const json names = column.value("typeName", json::object()).value("names", json::array());
    std::string type =
        names.empty() ? "" : names.back().value("String", json::object()).value("sval", "");
    return type == "serial" || type == "bigserial" || type == "smallserial" || type == "serial2"
           || type == "serial4" || type == "serial8";
  }

  void add_column(const std::string& table, const json& wrapped) {
    auto [kind, def] = node(wrapped);
    if (kind != "ColumnDef") {
      return;
    }
    bool not_null = false;
    bool has_default = false;
    bool rewrites = is_serial(*def);
    for (const json& c : def->value("constraints", json::array())) {
      auto [ckind, constraint] = node(c);
      std::string type = ckind == "Constraint" ? constraint->value("contype", "") : "";
      not_null = not_null || type == "CONSTR_NOTNULL" || type == "CONSTR_PRIMARY";
      has_default = has_default || type == "CONSTR_DEFAULT" || type == "CONSTR_IDENTITY"
                    || type == "CONSTR_GENERATED";
      rewrites = rewrites || type == "CONSTR_IDENTITY" || type == "CONSTR_GENERATED"
                 || (type == "CONSTR_DEFAULT" && calls_volatile(*constraint));
    }
    std::string column = def->value("colname", "");
    if (not_null && !has_default && !is_serial(*def)) {
      add(id::kSqlAddColumnNotNull, table,
          fmt::format("ADD COLUMN {}.{} NOT NULL without a DEFAULT: the running version's "
                      "INSERTs do not name it and fail (and a non-empty table refuses it)",
                      table, column),
          "add it with a DEFAULT (PostgreSQL 11+ adds it without a rewrite), or nullable: "
          "write it from the new version, backfill, then enforce NOT NULL in a later release");
    }
    if (rewrites) {
      add(id::kSqlTableRewrite, table,
          fmt::format("ADD COLUMN {}.{} fills every row (serial, identity, generated or a "
                      "volatile DEFAULT): the table is rewritten under an ACCESS EXCLUSIVE lock",
                      table, column),
          "add the column nullable without a default, set the default for new rows, backfill "
          "in batches");
    }
  }

  void add_constraint(const std::string& table, const json& wrapped) {
    auto [kind, constraint] = node(wrapped);
    if (kind != "Constraint") {
      return;
    }
    std::string type = constraint->value("contype", "");
    std::string name = constraint->value("conname", "");
    if (type == "CONSTR_UNIQUE" || type == "CONSTR_PRIMARY" || type == "CONSTR_EXCLUSION") {
      if (constraint->value("indexname", "").empty()) {
        add(id::kSqlLockingIndex, table,
            fmt::format("ADD {} on {} builds its index under a lock that blocks writes",
                        type == "CONSTR_PRIMARY" ? "PRIMARY KEY" : "UNIQUE", table),
            "CREATE UNIQUE INDEX CONCURRENTLY first, then ADD CONSTRAINT … USING INDEX");
      }
    } else if ((type == "CONSTR_CHECK" || type == "CONSTR_FOREIGN")
               && !constraint->value("skip_validation", false)) {
      add(id::kSqlConstraintValidated, table,
          fmt::format("ADD CONSTRAINT {} on {} checks every row while it holds a lock that "
                      "blocks writes",
                      name.empty() ? "(unnamed)" : name, table),
          "ADD CONSTRAINT … NOT VALID, then VALIDATE CONSTRAINT in a separate transaction (a "
          "lock that lets writes through)");
    }
  }

  void rename(const json& body) {
    std::string type = body.value("renameType", "");
    const json relation = body.value("relation", json::object());
    std::string table = table_name(relation);
    std::string new_name = body.value("newname", "");
    bool was_created_here = created_here(table);
    if (type == "OBJECT_COLUMN") {
      context_.history.rename_column(table, body.value("subname", ""), new_name);
    } else if (type == "OBJECT_TABLE") {
      // The new name is in the same schema; no running version knew a table by it.
      std::string schema = relation.value("schemaname", "");
      std::string renamed = schema.empty() ? new_name : schema + "." + new_name;
      context_.history.rename_table(table, renamed);
      context_.created_tables.insert(renamed);
      if (!was_created_here) {
        context_.renamed_tables.emplace_back(table, renamed);
      }
    }
    if (was_created_here) {
      return;
    }
    if (type == "OBJECT_COLUMN") {
      add(id::kSqlRenameColumn, table,
          fmt::format("RENAME COLUMN {}.{} TO {}: the version still running uses the old name",
                      table, body.value("subname", ""), body.value("newname", "")),
          "expand/contract: add the new column, deploy a version that writes both and reads the "
          "old, backfill, deploy one that reads the new, drop the old column in a later release");
    } else if (type == "OBJECT_TABLE") {
      add(id::kSqlRenameTable, table,
          fmt::format("RENAME TABLE {} TO {}: the version still running uses the old name", table,
                      body.value("newname", "")),
          "expand/contract: create the new table (or a view under the old name), write both, "
          "move reads, drop the old name in a later release");
    }
  }

  void drop(const json& body) {
    std::string type = body.value("removeType", "");
    bool concurrent = body.value("concurrent", false);
    for (const json& object : body.value("objects", json::array())) {
      std::string name;
      for (const json& part : object.value("List", json::object()).value("items", json::array())) {
        name += (name.empty() ? "" : ".") + part.value("String", json::object()).value("sval", "");
      }
      bool was_created_here = created_here(name);
      if (type == "OBJECT_TABLE") {
        context_.history.drop_table(name);
      }
      if (was_created_here || (type == "OBJECT_TABLE" && context_.history.is_backup(name))) {
        continue;
      }
      if (type == "OBJECT_TABLE") {
        add(id::kSqlDropTable, name,
            fmt::format("DROP TABLE {}: the version still running reads or writes it", name),
            "contract later: deploy a version that no longer uses the table, then drop it in "
            "the next release");
      } else if (type == "OBJECT_INDEX" && !concurrent) {
        add(id::kSqlLockingIndex, name,
            fmt::format("DROP INDEX {} without CONCURRENTLY locks its table against reads and "
                        "writes",
                        name),
            "DROP INDEX CONCURRENTLY (outside a transaction block)");
      }
    }
  }

  void index(const json& body) {
    std::string table = table_name(body.value("relation", json::object()));
    if (body.value("concurrent", false) || created_here(table)) {
      return;
    }
    add(id::kSqlLockingIndex, table,
        fmt::format("CREATE INDEX{} on {} without CONCURRENTLY blocks writes to the table "
                    "until the index is built",
                    body.value("idxname", "").empty() ? "" : " " + body.value("idxname", ""),
                    table),
        "CREATE INDEX CONCURRENTLY (outside a transaction block; drop an INVALID index left by "
        "a failed build and retry)");
  }

  const Statement& s_;
  MigrationContext& context_;
  std::vector<Finding> out_;
};

}  // namespace

std::vector<Finding> check_statement(const Statement& statement, MigrationContext& context) {
  return Checker(statement, context).run();
}

}  // namespace zerodrop::audit
