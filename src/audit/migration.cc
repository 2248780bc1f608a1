#include "audit/migration.h"

#include <pg_query.h>

#include <algorithm>
#include <cctype>
#include <filesystem>
#include <memory>
#include <set>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "audit/migration_rules.h"
#include "audit/rule.h"
#include "base/text.h"

namespace zerodrop::audit {
namespace {

using nlohmann::json;

std::string base_name(std::string_view path) {
  return std::filesystem::path(std::string(path)).filename().string();
}

// Owns libpg_query's result for the scope of one file.
struct ParseResult {
  PgQueryParseResult result;

  explicit ParseResult(const std::string& sql) : result(pg_query_parse(sql.c_str())) {}

  ~ParseResult() { pg_query_free_parse_result(result); }

  ParseResult(const ParseResult&) = delete;
  ParseResult& operator=(const ParseResult&) = delete;
};

// 1-based line and column of byte `offset` in `text`.
kube::Mark mark_at(std::string_view text, size_t offset) {
  offset = std::min(offset, text.size());
  kube::Mark m{1, 1};
  for (size_t i = 0; i < offset; ++i) {
    if (text[i] == '\n') {
      ++m.line;
      m.column = 1;
    } else {
      ++m.column;
    }
  }
  return m;
}

// Where the statement's first token is: past the whitespace and comments before it.
size_t first_token(std::string_view text, size_t at, size_t end) {
  while (at < end) {
    if (std::isspace(static_cast<unsigned char>(text[at]))) {
      ++at;
    } else if (text.substr(at, 2) == "--") {
      size_t nl = text.find('\n', at);
      at = nl == std::string_view::npos ? end : nl + 1;
    } else if (text.substr(at, 2) == "/*") {
      size_t close = text.find("*/", at + 2);
      at = close == std::string_view::npos ? end : close + 2;
    } else {
      break;
    }
  }
  return at;
}

// The rule ids named by "zerodrop:ignore a,b" in the comments between `from` and `to`.
std::set<std::string, std::less<>> ignored_rules(std::string_view comments) {
  std::set<std::string, std::less<>> out;
  constexpr std::string_view kTag = "zerodrop:ignore";
  for (size_t at = comments.find(kTag); at != std::string_view::npos;
       at = comments.find(kTag, at + kTag.size())) {
    size_t start = at + kTag.size();
    size_t nl = comments.find('\n', start);
    std::string_view list = comments.substr(start, nl == std::string_view::npos ? nl : nl - start);
    for (std::string_view id : split(list, ',')) {
      id = trim(id);
      if (size_t space = id.find_first_of(" \t*"); space != std::string_view::npos) {
        id = id.substr(0, space);  // "-- zerodrop:ignore sql-drop-column because …"
      }
      if (!id.empty()) {
        out.emplace(id);
      }
    }
  }
  return out;
}

Finding invalid_migration(const std::string& file, kube::Mark mark, std::string message) {
  Finding f;
  f.rule = rule_id::kInvalidMigration;
  f.severity = Severity::error;
  f.file = file;
  f.mark = mark;
  f.object = {"Migration", "", base_name(file), ""};
  f.message = std::move(message);
  f.fix = "fix the statement; the audit reads PostgreSQL's SQL with PostgreSQL's own parser";
  return f;
}

bool is_manifest_name(const std::filesystem::path& p) {
  std::string ext = p.extension().string();
  return ext == ".yaml" || ext == ".yml" || ext == ".json";
}

}  // namespace

AuditInputs split_inputs(const std::vector<std::string>& paths) {
  namespace fs = std::filesystem;
  AuditInputs out;
  for (const std::string& path : paths) {
    std::error_code ec;
    if (!fs::is_directory(path, ec)) {
      // A file named outright: SQL by its name, everything else for the loader (which reports a
      // missing path).
      (path.ends_with(".sql") ? out.migrations : out.manifests).push_back(path);
      continue;
    }
    std::vector<std::string> found;
    bool manifests = false;
    auto it = fs::recursive_directory_iterator(path, ec);
    for (; !ec && it != fs::recursive_directory_iterator(); it.increment(ec)) {
      std::error_code entry_ec;
      if (!it->is_regular_file(entry_ec)) {
        continue;
      }
      if (is_migration_file(it->path().string())) {
        found.push_back(it->path().string());
      }
      manifests = manifests || is_manifest_name(it->path());
    }
    // The loader reads the folder again and names an unreadable or empty one.
    if (manifests || found.empty() || ec) {
      out.manifests.push_back(path);
    }
    sort_migrations(found);
    out.migrations.insert(out.migrations.end(), found.begin(), found.end());
  }
  return out;
}

bool is_migration_file(std::string_view path) {
  std::string name = base_name(path);
  if (!name.ends_with(".sql") || name.ends_with(".down.sql")) {
    return false;
  }
  // Flyway's undo migrations: U1__x.sql, U1.2__x.sql.
  return !(name.size() > 1 && name[0] == 'U' && std::isdigit(static_cast<unsigned char>(name[1]))
           && name.find("__") != std::string::npos);
}

namespace {

// Flyway's version of "V1.2__x.sql" / "V1_2__x.sql": {1, 2}; empty for other names.
std::vector<long> flyway_version(const std::string& path) {
  std::string name = base_name(path);
  size_t end = name.find("__");
  std::vector<long> parts;
  if (name.size() < 2 || name[0] != 'V' || end == std::string::npos) {
    return parts;
  }
  for (std::string_view part : split(std::string_view(name).substr(1, end - 1), '.')) {
    for (std::string_view number : split(part, '_')) {
      if (number.empty() || number.size() > 18
          || !std::all_of(number.begin(), number.end(),
                          [](char c) { return std::isdigit(static_cast<unsigned char>(c)); })) {
        return {};
      }
      parts.push_back(std::stol(std::string(number)));
    }
  }
  return parts;
}

// Natural order: runs of digits compare as numbers, so "2_x" comes before "10_x".
bool natural_less(std::string_view a, std::string_view b) {
  auto digits = [](std::string_view s, size_t at) {
    size_t end = at;
    while (end < s.size() && std::isdigit(static_cast<unsigned char>(s[end]))) {
      ++end;
    }
    std::string_view run = s.substr(at, end - at);
    while (run.size() > 1 && run[0] == '0') {
      run.remove_prefix(1);
    }
    return std::pair{run, end};
  };
  size_t i = 0;
  size_t j = 0;
  while (i < a.size() && j < b.size()) {
    if (std::isdigit(static_cast<unsigned char>(a[i]))
        && std::isdigit(static_cast<unsigned char>(b[j]))) {
      auto [na, ei] = digits(a, i);
      auto [nb, ej] = digits(b, j);
      if (na.size() != nb.size() || na != nb) {
        return na.size() != nb.size() ? na.size() < nb.size() : na < nb;
      }
      i = ei;
      j = ej;
    } else if (a[i] != b[j]) {
      return a[i] < b[j];
    } else {
      ++i;
      ++j;
    }
  }
  return a.size() - i < b.size() - j;
}

}  // namespace

void sort_migrations(std::vector<std::string>& files) {
  auto repeatable = [](const std::string& f) {
    return base_name(f).starts_with("R__");
  };
  std::stable_sort(files.begin(), files.end(), [&](const std::string& a, const std::string& b) {
    if (repeatable(a) != repeatable(b)) {
      return repeatable(b);
    }
    std::vector<long> va = flyway_version(a);
    std::vector<long> vb = flyway_version(b);
    if (!va.empty() && !vb.empty() && va != vb) {
      return va < vb;
    }
    return natural_less(a, b);
  });
}

namespace {

// Go templates ({{ .Schema }}.users, as in soda/pop and gotrue migrations) are rendered by the
// tool at deploy time. Each action is read as a name of the same length, so positions stay
// exact; `placeholders` maps each name back to its action for the messages.
struct Templates {
  std::string sql;
  std::vector<std::pair<std::string, std::string>> placeholders;  // name, "{{ … }}"
};

Templates blank_templates(std::string_view text) {
  Templates out{std::string(text), {}};
  size_t at = 0;
  while ((at = out.sql.find("{{", at)) != std::string::npos) {
    size_t end = out.sql.find("}}", at + 2);
    if (end == std::string::npos) {
      break;
    }
    size_t length = end + 2 - at;
    std::string name = "_t" + std::to_string(out.placeholders.size());
    name = name.size() <= length ? name + std::string(length - name.size(), '_')
                                 : std::string(length, '_');
    out.placeholders.emplace_back(name, out.sql.substr(at, length));
    out.sql.replace(at, length, name);
    at += length;
  }
  return out;
}

void restore_templates(const Templates& templates, Finding& f) {
  for (const auto& [name, action] : templates.placeholders) {
    for (std::string* text : {&f.message, &f.object.name}) {
      for (size_t at = 0; (at = text->find(name, at)) != std::string::npos; at += action.size()) {
        text->replace(at, name.size(), action);
      }
    }
  }
}

// A table swap (RENAME t TO t_old, then CREATE TABLE t, copy) keeps the name the running
// version uses: the rename is not the schema race its rule describes, and t_old is a backup
// that a later file may drop.
void drop_swapped_renames(std::vector<Finding>& findings, MigrationContext& context) {
  std::erase_if(findings, [&](const Finding& f) {
    return f.rule == rule_id::kSqlRenameTable && context.created_tables.contains(f.object.name);
  });
  for (const auto& [old_name, new_name] : context.renamed_tables) {
    if (context.created_tables.contains(old_name)) {
      context.history.add_backup(new_name);
    }
  }
}

}  // namespace

std::vector<Finding> audit_migration(const std::string& file, std::string_view text) {
  SchemaHistory history;
  return audit_migration(file, text, history);
}

std::vector<Finding> audit_migration(const std::string& file, std::string_view text,
                                     SchemaHistory& history) {
  if (size_t nul = text.find('\0'); nul != std::string_view::npos) {
    return {invalid_migration(file, mark_at(text, nul), "a NUL byte: not a SQL text file")};
  }
  Templates templates = blank_templates(text);
  ParseResult parsed(templates.sql);
  if (parsed.result.error) {
    const PgQueryError& e = *parsed.result.error;
    size_t at = e.cursorpos > 0 ? static_cast<size_t>(e.cursorpos - 1) : 0;
    std::string message = e.message ? e.message : "cannot parse";
    if (!templates.placeholders.empty()) {
      message += " (a Go template: its {{ }} actions were read as names)";
    }
    return {invalid_migration(file, mark_at(text, at), std::move(message))};
  }
  json tree = json::parse(parsed.result.parse_tree, nullptr, false);
  if (tree.is_discarded() || !tree.is_object()) {
    return {invalid_migration(file, {1, 1}, "the SQL parser returned an unreadable tree")};
  }
  std::vector<Finding> out;
  MigrationContext context{{}, {}, history};
  for (const json& entry : tree.value("stmts", json::array())) {
    size_t location = entry.value("stmt_location", size_t{0});
    size_t length = entry.value("stmt_len", size_t{0});
    size_t end = length == 0 ? text.size() : std::min(text.size(), location + length);
    size_t start = first_token(text, location, end);
    std::set<std::string, std::less<>> ignored =
        ignored_rules(text.substr(location, start - location));
    Statement statement{file, mark_at(text, start), entry.value("stmt", json::object())};
    for (Finding& f : check_statement(statement, context)) {
      if (!ignored.contains(f.rule) && !(f.hole && ignored.contains(record::to_string(*f.hole)))) {
        restore_templates(templates, f);
        out.push_back(std::move(f));
      }
    }
  }
  drop_swapped_renames(out, context);
  return out;
}

}  // namespace zerodrop::audit
