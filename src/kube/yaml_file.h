#pragma once
// A small YAML file read whole (audit's config file, a sim profile) with the parser the manifests
// use: bounded size and nesting, duplicate keys rejected, every node's position kept.

#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "kube/mark.h"
#include "kube/yaml_tree.h"

namespace zerodrop::kube {

using YamlNode = detail::YamlNode;

class YamlFile {
public:
  // Reads and parses `path`. Throws Error "PATH: cannot read the file" (or "…: larger than …")
  // and "PATH:LINE:COL: invalid YAML: …".
  explicit YamlFile(std::string path);
  YamlFile(const YamlFile&) = delete;
  YamlFile& operator=(const YamlFile&) = delete;

  const std::string& path() const { return path_; }

  // The document's root; a null node for an empty file.
  const YamlNode& root() const;

  // 1-based, as editors show it.
  static Mark mark(const YamlNode& node) { return Mark{node.line + 1, node.column + 1}; }

  // Throws Error "PATH:LINE:COL: what" at `node`.
  [[noreturn]] void fail(const YamlNode& node, std::string_view what) const;

  // The text of a scalar; fails with "expected `what`" at anything else.
  const std::string& scalar(const YamlNode& node, std::string_view what = "a string") const;

  // A mapping's entries (key, value) in file order; fails at anything else with `what`.
  std::vector<std::pair<const YamlNode*, const YamlNode*>> entries(const YamlNode& map,
                                                                   std::string_view what) const;

private:
  std::string path_;
  detail::YamlDocument doc_;
  YamlNode null_;
};

}  // namespace zerodrop::kube
