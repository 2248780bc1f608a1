#include "kube/yaml_file.h"

#include <fmt/format.h>

#include "base/error.h"
#include "kube/loader.h"

namespace zerodrop::kube {

YamlFile::YamlFile(std::string path) : path_(std::move(path)) {
  FileText file = read_file(path_);
  if (file.problem) {
    throw Error(fmt::format("{}: {}", path_, file.problem->message));
  }
  try {
    doc_.parse(file.text);
  } catch (const detail::YamlError& e) {
    throw Error(
        fmt::format("{}:{}:{}: invalid YAML: {}", path_, e.line + 1, e.column + 1, e.message));
  }
}

const YamlNode& YamlFile::root() const {
  return doc_.root() != nullptr ? *doc_.root() : null_;
}

void YamlFile::fail(const YamlNode& node, std::string_view what) const {
  Mark m = mark(node);
  throw Error(fmt::format("{}:{}:{}: {}", path_, m.line, m.column, what));
}

const std::string& YamlFile::scalar(const YamlNode& node, std::string_view what) const {
  if (!node.is_scalar()) {
    fail(node, fmt::format("expected {}", what));
  }
  return node.scalar;
}

std::vector<std::pair<const YamlNode*, const YamlNode*>> YamlFile::entries(
    const YamlNode& map, std::string_view what) const {
  if (!map.is_map()) {
    fail(map, what);
  }
  try {
    detail::check_unique_keys(map);
  } catch (const detail::YamlError& e) {
    throw Error(fmt::format("{}:{}:{}: {}", path_, e.line + 1, e.column + 1, e.message));
  }
  std::vector<std::pair<const YamlNode*, const YamlNode*>> out;
  for (size_t i = 0; i + 1 < map.items.size(); i += 2) {
    out.emplace_back(map.items[i], map.items[i + 1]);
  }
  return out;
}

}  // namespace zerodrop::kube
