#include "kube/yaml_reader.h"

#include <charconv>

#include <fmt/format.h>

#include "base/error.h"

namespace zerodrop::kube::detail {
namespace {

bool plain(const YAML::Node& node) {
  return node.Tag() == "?" || node.Tag().empty();
}

bool null_like(const YAML::Node& node) {
  return !node.IsDefined() || node.IsNull();
}

std::string describe(const YAML::Node& node) {
  switch (node.Type()) {
    case YAML::NodeType::Map:
      return "a mapping";
    case YAML::NodeType::Sequence:
      return "a list";
    case YAML::NodeType::Scalar: {
      std::string text = node.Scalar().substr(0, 40);
      return fmt::format("'{}'", text);
    }
    default:
      return "null";
  }
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

Reader::Reader(std::string file, int line_offset, int64_t node_budget)
    : file_(std::move(file)), line_offset_(line_offset), budget_(node_budget) {}

Mark Reader::mark(const YAML::Node& node) const {
  YAML::Mark m = node.Mark();
  if (m.is_null()) {
    return {};
  }
  return {m.line + 1 + line_offset_, m.column + 1};
}

ReadError::ReadError(const std::string& file, Mark at, std::string message)
    : Error(fmt::format("{}:{}:{}: {}", file, at.line, at.column, message)),
      mark(at),
      detail(std::move(message)) {}

void Reader::fail(const YAML::Node& node, const Path& path, std::string_view what) const {
  std::string where = path.str();
  throw ReadError(file_, mark(node),
                  where.empty() ? std::string(what) : fmt::format("{}: {}", where, what));
}

void Reader::spend(const YAML::Node& node, const Path& path) {
  if (--budget_ < 0) {
    fail(node, path, "too many nodes (alias expansion or document size over the limit)");
  }
}

void Reader::expect_map(const YAML::Node& node, const Path& path) const {
  if (!node.IsMap()) {
    fail(node, path, fmt::format("expected a mapping, got {}", describe(node)));
  }
}

std::optional<Entry> Reader::child(const YAML::Node& map, const Path& path, std::string_view key) {
  if (null_like(map)) {
    return std::nullopt;
  }
  expect_map(map, path);
  for (auto it = map.begin(); it != map.end(); ++it) {
    spend(it->first, path);
    if (it->first.IsScalar() && it->first.Scalar() == key) {
      if (null_like(it->second)) {
        return std::nullopt;
      }
      return Entry{it->first, it->second, Path{&path, key}};
    }
  }
  return std::nullopt;
}

std::vector<Entry> Reader::items(const YAML::Node& seq, const Path& path) {
  std::vector<Entry> out;
  if (null_like(seq)) {
    return out;
  }
  if (!seq.IsSequence()) {
    fail(seq, path, fmt::format("expected a list, got {}", describe(seq)));
  }
  int index = 0;
  for (const YAML::Node& item : seq) {
    spend(item, path);
    out.push_back(Entry{item, item, Path{&path, "", index++}});
  }
  return out;
}

std::string Reader::scalar(const YAML::Node& node, const Path& path) const {
  if (!node.IsScalar()) {
    fail(node, path, fmt::format("expected a string, got {}", describe(node)));
  }
  return node.Scalar();
}

int64_t Reader::integer(const YAML::Node& node, const Path& path, int64_t min, int64_t max) const {
  int64_t value = 0;
  const std::string& text = node.IsScalar() ? node.Scalar() : std::string();
  auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), value);
  if (!node.IsScalar() || !plain(node) || text.empty() || ec != std::errc()
      || end != text.data() + text.size()) {
    fail(node, path, fmt::format("expected a whole number, got {}", describe(node)));
  }
  if (value < min || value > max) {
    fail(node, path, fmt::format("expected a number from {} to {}, got {}", min, max, value));
  }
  return value;
}

std::string Reader::int_or_percent(const YAML::Node& node, const Path& path) const {
  std::string text = scalar(node, path);
  std::string_view digits = text;
  if (!digits.empty() && digits.back() == '%') {
    digits.remove_suffix(1);
  }
  int64_t value = 0;
  auto [end, ec] = std::from_chars(digits.data(), digits.data() + digits.size(), value);
  if (digits.empty() || ec != std::errc() || end != digits.data() + digits.size() || value < 0) {
    fail(node, path, fmt::format("expected a number or a percentage, got '{}'", text));
  }
  return text;
}

bool Reader::boolean(const YAML::Node& node, const Path& path) const {
  std::string text = scalar(node, path);
  if (text == "true" || text == "True" || text == "TRUE") {
    return true;
  }
  if (text == "false" || text == "False" || text == "FALSE") {
    return false;
  }
  fail(node, path, fmt::format("expected true or false, got '{}'", text));
}

Labels Reader::string_map(const YAML::Node& node, const Path& path) {
  Labels out;
  if (null_like(node)) {
    return out;
  }
  expect_map(node, path);
  for (auto it = node.begin(); it != node.end(); ++it) {
    spend(it->first, path);
    std::string key = scalar(it->first, path);
    Path at{&path, key};
    out[key] = null_like(it->second) ? std::string() : scalar(it->second, at);
  }
  return out;
}

std::vector<std::string> Reader::strings(const YAML::Node& node, const Path& path) {
  std::vector<std::string> out;
  for (const Entry& e : items(node, path)) {
    out.push_back(scalar(e.value, e.path));
  }
  return out;
}

LabelSelector Reader::selector(const YAML::Node& node, const Path& path) {
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

std::optional<int64_t> Reader::opt_integer(const YAML::Node& map, const Path& path,
                                           std::string_view key, Marks& marks, int64_t min,
                                           int64_t max) {
  auto e = child(map, path, key);
  if (!e) {
    return std::nullopt;
  }
  marks.set(key, mark(e->key));
  return integer(e->value, e->path, min, max);
}

std::string Reader::opt_scalar(const YAML::Node& map, const Path& path, std::string_view key) {
  auto e = child(map, path, key);
  return e ? scalar(e->value, e->path) : std::string();
}

}  // namespace zerodrop::kube::detail
