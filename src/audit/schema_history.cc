#include "audit/schema_history.h"

#include <algorithm>
#include <array>
#include <utility>

#include <nlohmann/json.hpp>

namespace zerodrop::audit {
namespace {

using nlohmann::json;

// The first integer constant under an A_Const, in the tree shapes of libpg_query 13
// ({"val": {"Integer": {"ival": 5}}}) and 15+ ({"ival": {"ival": 5}}).
std::optional<long> integer_in(const json& node) {
  if (node.is_object()) {
    if (auto it = node.find("ival"); it != node.end()) {
      if (it->is_number_integer()) {
        return it->get<long>();
      }
      return integer_in(*it);
    }
  }
  if (node.is_structured()) {
    for (const json& child : node) {
      if (auto value = integer_in(child)) {
        return value;
      }
    }
  }
  return std::nullopt;
}

// serial and its kin are their integer type once the table exists.
std::string canonical(std::string name) {
  static constexpr std::array<std::pair<std::string_view, std::string_view>, 6> kSerial{{
      {"serial", "int4"},
      {"serial4", "int4"},
      {"bigserial", "int8"},
      {"serial8", "int8"},
      {"smallserial", "int2"},
      {"serial2", "int2"},
  }};
  for (auto [serial, integer] : kSerial) {
    if (name == serial) {
      return std::string(integer);
    }
  }
  return name;
}

// Types whose every value the next one holds; changing between them rewrites the table.
bool widens(std::string_view from, std::string_view to) {
  static constexpr std::array<std::pair<std::string_view, std::string_view>, 9> kWidening{{
      {"int2", "int4"},
      {"int2", "int8"},
      {"int4", "int8"},
      {"int2", "numeric"},
      {"int4", "numeric"},
      {"int8", "numeric"},
      {"float4", "float8"},
      {"timestamp", "timestamptz"},
      {"json", "jsonb"},
  }};
  return std::find(kWidening.begin(), kWidening.end(), std::pair{from, to}) != kWidening.end();
}

// A length limit (varchar, bit varying) or precision (time, timestamp, interval): no limit or a
// larger one accepts every old value and changes only the catalog.
TypeChange limit_change(const ColumnType& from, const ColumnType& to) {
  if (to.mods.empty()) {
    return TypeChange::free;
  }
  if (from.mods.empty()) {
    return TypeChange::breaking;
  }
  return to.mods[0] >= from.mods[0] ? TypeChange::free : TypeChange::breaking;
}

// numeric(p, s): the old values fit when neither the integer digits nor the scale shrink; a
// new scale rewrites every value.
TypeChange numeric_change(const ColumnType& from, const ColumnType& to) {
  if (to.mods.empty()) {
    return from.mods.empty() ? TypeChange::free : TypeChange::widening_rewrite;
  }
  if (from.mods.empty()) {
    return TypeChange::breaking;
  }
  long from_scale = from.mods.size() > 1 ? from.mods[1] : 0;
  long to_scale = to.mods.size() > 1 ? to.mods[1] : 0;
  if (to.mods[0] - to_scale < from.mods[0] - from_scale || to_scale < from_scale) {
    return TypeChange::breaking;
  }
  return to_scale == from_scale ? TypeChange::free : TypeChange::widening_rewrite;
}

}  // namespace

ColumnType column_type(const json& type_name) {
  ColumnType type;
  const json names = type_name.value("names", json::array());
  if (!names.empty()) {
    type.name = canonical(names.back().value("String", json::object()).value("sval", ""));
  }
  for (const json& mod : type_name.value("typmods", json::array())) {
    if (auto value = integer_in(mod)) {
      type.mods.push_back(*value);
    }
  }
  type.array = !type_name.value("arrayBounds", json::array()).empty();
  return type;
}

std::string to_string(const ColumnType& type) {
  std::string out = type.name;
  for (size_t i = 0; i < type.mods.size(); ++i) {
    out += (i == 0 ? "(" : ",") + std::to_string(type.mods[i]);
  }
  out += type.mods.empty() ? "" : ")";
  return type.array ? out + "[]" : out;
}

TypeChange classify(const ColumnType& from, const ColumnType& to) {
  if (from.name.empty() || to.name.empty() || from.array != to.array) {
    return TypeChange::breaking;
  }
  if (from == to) {
    return TypeChange::free;
  }
  if (from.array) {
    return TypeChange::breaking;
  }
  if (from.name == to.name) {
    if (from.name == "numeric") {
      return numeric_change(from, to);
    }
    static constexpr std::array<std::string_view, 7> kLimited{
        "varchar", "varbit", "time", "timetz", "timestamp", "timestamptz", "interval"};
    bool limited = std::find(kLimited.begin(), kLimited.end(), from.name) != kLimited.end();
    return limited ? limit_change(from, to) : TypeChange::breaking;
  }
  if ((from.name == "varchar" && to.name == "text")
      || (from.name == "text" && to.name == "varchar" && to.mods.empty())) {
    return TypeChange::free;
  }
  return widens(from.name, to.name) ? TypeChange::widening_rewrite : TypeChange::breaking;
}

std::string_view SchemaHistory::unqualified(std::string_view table) {
  return table.starts_with("public.") ? table.substr(7) : table;
}

std::string SchemaHistory::key(std::string_view table, std::string_view column) {
  std::string out(unqualified(table));
  out += '\n';
  out += column;
  return out;
}

void SchemaHistory::set(std::string_view table, std::string_view column, ColumnType type) {
  columns_[key(table, column)] = std::move(type);
}

std::optional<ColumnType> SchemaHistory::type_of(std::string_view table,
                                                 std::string_view column) const {
  auto it = columns_.find(key(table, column));
  return it == columns_.end() ? std::nullopt : std::optional<ColumnType>(it->second);
}

void SchemaHistory::drop_column(std::string_view table, std::string_view column) {
  columns_.erase(key(table, column));
}

void SchemaHistory::rename_column(std::string_view table, std::string_view from,
                                  std::string_view to) {
  if (auto type = type_of(table, from)) {
    drop_column(table, from);
    set(table, to, std::move(*type));
  }
}

void SchemaHistory::drop_table(std::string_view table) {
  std::string prefix = key(table, "");
  auto first = columns_.lower_bound(prefix);
  auto last = first;
  while (last != columns_.end() && last->first.starts_with(prefix)) {
    ++last;
  }
  columns_.erase(first, last);
}

void SchemaHistory::rename_table(std::string_view from, std::string_view to) {
  std::string prefix = key(from, "");
  std::vector<std::pair<std::string, ColumnType>> moved;
  for (auto it = columns_.lower_bound(prefix);
       it != columns_.end() && it->first.starts_with(prefix); ++it) {
    moved.emplace_back(it->first.substr(prefix.size()), it->second);
  }
  drop_table(from);
  drop_table(to);
  for (auto& [column, type] : moved) {
    set(to, column, std::move(type));
  }
}

void SchemaHistory::add_domain(std::string_view name, ColumnType base, bool constrained) {
  domains_[std::string(name)] = {std::move(base), constrained};
}

ColumnType SchemaHistory::base_of(const ColumnType& type) const {
  ColumnType out = type;
  for (int depth = 0; depth < 8 && !out.array; ++depth) {  // domains over domains, no cycles
    auto it = domains_.find(out.name);
    if (it == domains_.end()) {
      break;
    }
    out = it->second.base;
  }
  return out;
}

bool SchemaHistory::is_constrained_domain(const ColumnType& type) const {
  auto it = domains_.find(type.name);
  return it != domains_.end() && it->second.constrained;
}

void SchemaHistory::add_backup(std::string_view table) {
  backups_.emplace(unqualified(table));
}

bool SchemaHistory::is_backup(std::string_view table) const {
  return backups_.contains(unqualified(table));
}

}  // namespace zerodrop::audit
