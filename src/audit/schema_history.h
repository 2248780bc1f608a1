#pragma once

#include <map>
#include <optional>
#include <set>
#include <string>
#include <string_view>
#include <vector>

#include <nlohmann/json_fwd.hpp>

namespace zerodrop::audit {

// A column's type as libpg_query's TypeName gives it: the last name part ("varchar", "int8",
// "text"), its modifiers (varchar(255) → {255}, numeric(10,2) → {10, 2}), and whether it is an
// array. `name` is empty for a type the parser tree does not describe plainly.
struct ColumnType {
  std::string name;
  std::vector<long> mods;
  bool array = false;

  bool operator==(const ColumnType&) const = default;
};

ColumnType column_type(const nlohmann::json& type_name);

// "varchar(255)", "int8", "text[]": for messages.
std::string to_string(const ColumnType& type);

// What ALTER COLUMN … TYPE does when the audit knows the old type. `free`: PostgreSQL changes
// only the catalog (varchar(64) → varchar(256) or text, numeric(10,2) → numeric(12,2)); every
// value the running version writes still fits. `widening_rewrite`: the table is rewritten under
// an ACCESS EXCLUSIVE lock, but the old type's values fit the new one (int4 → int8, float4 →
// float8, timestamp → timestamptz). `breaking`: anything else (narrowing, another family).
enum class TypeChange { free, widening_rewrite, breaking };

TypeChange classify(const ColumnType& from, const ColumnType& to);

// Column types from the migrations read so far, in the order they apply, so that a later ALTER
// COLUMN … TYPE can be judged against the column's real old type. Tables are keyed as written,
// without a leading "public.".
class SchemaHistory {
public:
  void set(std::string_view table, std::string_view column, ColumnType type);
  std::optional<ColumnType> type_of(std::string_view table, std::string_view column) const;
  void drop_column(std::string_view table, std::string_view column);
  void rename_column(std::string_view table, std::string_view from, std::string_view to);
  void drop_table(std::string_view table);
  void rename_table(std::string_view from, std::string_view to);

  // CREATE DOMAIN name AS base [CHECK …]: a column changed to the domain is judged by its base
  // type; a domain with constraints makes PostgreSQL check every row.
  void add_domain(std::string_view name, ColumnType base, bool constrained);
  ColumnType base_of(const ColumnType& type) const;
  bool is_constrained_domain(const ColumnType& type) const;

  // A table swap's backup (RENAME t TO t_old, CREATE TABLE t): no version of the application
  // reads it by its new name, so dropping it later breaks nothing.
  void add_backup(std::string_view table);
  bool is_backup(std::string_view table) const;

private:
  static std::string key(std::string_view table, std::string_view column);

  static std::string_view unqualified(std::string_view table);

  std::map<std::string, ColumnType, std::less<>> columns_;  // "table\ncolumn"
  std::set<std::string, std::less<>> backups_;

  struct Domain {
    ColumnType base;
    bool constrained = false;
  };

  std::map<std::string, Domain, std::less<>> domains_;
};

}  // namespace zerodrop::audit
