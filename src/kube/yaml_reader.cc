#include "kube/yaml_reader.h"

#include <charconv>

#include <fmt/format.h>

#include "base/error.h"

namespace zerodrop::kube::detail {
namespace {

bool null_like(Node node) {
  return node == nullptr || node->is_null();
}

std::string describe(Node node) {
  if (null_like(node)) {
    return "null";
  }
  if (node->is_map()) {
    return "a mapping";
  }
  if (node->is_sequence()) {
    return "a list";
  }
  return fmt::format("'{}'", node->scalar.substr(0, 40));
}

}  // namespace

std::string Path::str() const {
  std::string head = parent ? parent->str() : "";
  if (index >= 0) {
    return fmt::format("{}[{}]", head, index);
  }
  if (head.empty()) {
    return std::string(key);
  }
  return fmt::format("{}.{}", head, key);
}

ReadError::ReadError(const std::string& file, Mark at, std::string message)
    : Error(fmt::format("{}:{}:{}: {}", file, at.line, at.column, message)),
      mark(at),
      detail(std::move(message)) {}

Reader::Reader(std::string file, int line_offset, int64_t node_budget)
    : file_(std::move(file)), line_offset_(line_offset), budget_(node_budget) {}

Mark Reader::mark(Node node) const {
  if (node == nullptr) {
    return {};
  }
  return {node->line + 1 + line_offset_, node->column + 1};
}

void Reader::fail(Node node, const Path& path, std::string_view what) const {
  std::string where = path.str();
  throw ReadError(file_, mark(node),
                  where.empty() ? std::string(what) : fmt::format("{}: {}", where, what));
}

void Reader::spend(Node node, const Path& path) {
  if (--budget_ < 0) {
    fail(node, path, "too many nodes (alias expansion or document size over the limit)");
  }
}

void Reader::expect_map(Node node, const Path& path) const {
  if (null_like(node) || !node->is_map()) {
    fail(node, path, fmt::format("expected a mapping, got {}", describe(node)));
  }
}

std::optional<Entry> Reader::child(Node map, const Path& path, std::string_view key) {
  if (null_like(map)) {
    return std::nullopt;
  }
  expect_map(map, path);
  const auto& items = map->items;
  for (size_t i = 0; i + 1 < items.size(); i += 2) {
    spend(items[i], path);
    if (items[i]->is_scalar() && items[i]->scalar == key) {
      if (null_like(items[i + 1])) {
        return std::nullopt;
      }
      return Entry{items[i], items[i + 1], Path{&path, key}};
    }
  }
  return std::nullopt;
}

std::vector<Entry> Reader::items(Node seq, const Path& path) {
  std::vector<Entry> out;
  if (null_like(seq)) {
    return out;
  }
  if (!seq->is_sequence()) {
    fail(seq, path, fmt::format("expected a list, got {}", describe(seq)));
  }
  int index = 0;
  out.reserve(seq->items.size());
  for (Node item : seq->items) {
    spend(item, path);
    out.push_back(Entry{item, item, Path{&path, "", index++}});
  }
  return out;
}

std::string Reader::scalar(Node node, const Path& path) const {
  if (null_like(node) || !node->is_scalar()) {
    fail(node, path, fmt::format("expected a string, got {}", describe(node)));
  }
  return node->scalar;
}

int64_t Reader::integer(Node node, const Path& path, int64_t min, int64_t max) const {
  int64_t value = 0;
  bool scalar = !null_like(node) && node->is_scalar();
  const std::string& text = scalar ? node->scalar : std::string();
  auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), value);
  if (!scalar || !node->plain || text.empty() || ec != std::errc()
      || end != text.data() + text.size()) {
    fail(node, path, fmt::format("expected a whole number, got {}", describe(node)));
  }
  if (value < min || value > max) {
    fail(node, path, fmt::format("expected a number from {} to {}, got {}", min, max, value));
  }
  return value;
}

IntOrPercent Reader::int_or_percent(Node node, const Path& path) const {
  std::string text = scalar(node, path);
  std::string_view digits = text;
  bool percent = !digits.empty() && digits.back() == '%';
  if (percent) {
    digits.remove_suffix(1);
  }
  int64_t value = 0;
  auto [end, ec] = std::from_chars(digits.data(), digits.data() + digits.size(), value);
  if (digits.empty() || ec != std::errc() || end != digits.data() + digits.size() || value < 0) {
    fail(node, path, fmt::format("expected a number or a percentage, got '{}'", text));
  }
  return percent ? IntOrPercent::percent(value) : IntOrPercent::count(value);
}

bool Reader::boolean(Node node, const Path& path) const {
  std::string text = scalar(node, path);
  if (text == "true" || text == "True" || text == "TRUE") {
    return true;
  }
  if (text == "false" || text == "False" || text == "FALSE") {
    return false;
  }
  fail(node, path, fmt::format("expected true or false, got '{}'", text));
}

Labels Reader::string_map(Node node, const Path& path) {
  Labels out;
  if (null_like(node)) {
    return out;
  }
  expect_map(node, path);
  const auto& items = node->items;
  for (size_t i = 0; i + 1 < items.size(); i += 2) {
    spend(items[i], path);
    std::string key = scalar(items[i], path);
    Path at{&path, key};
    out[key] = null_like(items[i + 1]) ? std::string() : scalar(items[i + 1], at);
  }
  return out;
}

std::vector<std::string> Reader::strings(Node node, const Path& path) {
  std::vector<std::string> out;
  for (const Entry& e : items(node, path)) {
    out.push_back(scalar(e.value, e.path));
  }
  return out;
}

LabelSelector Reader::selector(Node node, const Path& path) {
  LabelSelector out;
  expect_map(node, path);
  out.present = true;
  if (auto labels = child(node, path, "matchLabels")) {
    out.match_labels = string_map(labels->value, labels->path);
  }
  auto exprs = child(node, path, "matchExpressions");
  if (!exprs) {
    return out;
  }
  for (const Entry& e : items(exprs->value, exprs->path)) {
    LabelRequirement r;
    auto key = child(e.value, e.path, "key");
    auto op = child(e.value, e.path, "operator");
    if (!key || !op) {
      fail(e.value, e.path, "a matchExpressions entry needs 'key' and 'operator'");
    }
    r.key = scalar(key->value, key->path);
    std::string name = scalar(op->value, op->path);
    using Op = LabelRequirement::Op;
    if (name == "In") {
      r.op = Op::in;
    } else if (name == "NotIn") {
      r.op = Op::not_in;
    } else if (name == "Exists") {
      r.op = Op::exists;
    } else if (name == "DoesNotExist") {
      r.op = Op::does_not_exist;
    } else {
      fail(op->value, op->path,
           fmt::format("expected In, NotIn, Exists or DoesNotExist, got '{}'", name));
    }
    if (auto values = child(e.value, e.path, "values")) {
      r.values = strings(values->value, values->path);
    }
    out.match_expressions.push_back(std::move(r));
  }
  return out;
}

std::optional<int64_t> Reader::opt_integer(Node map, const Path& path, MarkKey key, Marks& marks,
                                           int64_t min, int64_t max) {
  auto e = child(map, path, key.name());
  if (!e) {
    return std::nullopt;
  }
  marks.set(key, mark(e->key));
  return integer(e->value, e->path, min, max);
}

std::string Reader::opt_scalar(Node map, const Path& path, std::string_view key) {
  auto e = child(map, path, key);
  return e ? scalar(e->value, e->path) : std::string();
}

}  // namespace zerodrop::kube::detail
