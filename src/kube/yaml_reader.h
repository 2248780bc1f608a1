#pragma once
// Internal to src/kube: typed, position-aware reading of the nodes of a YamlDocument.

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "base/error.h"
#include "base/int_or_percent.h"
#include "kube/label_selector.h"
#include "kube/mark.h"
#include "kube/yaml_tree.h"

namespace zerodrop::kube::detail {

// An invalid document: the position and the message without the "file:line:col: " prefix.
class ReadError : public Error {
public:
  ReadError(const std::string& file, Mark mark, std::string detail);
  Mark mark;
  std::string detail;
};

// Where a node sits in its document, built on the stack and printed only on error:
// "spec.template.spec.containers[0].image".
struct Path {
  const Path* parent = nullptr;
  std::string_view key;  // "" for a sequence item
  int index = -1;

  std::string str() const;
};

// A node of the document being read; never null for a present field.
using Node = const YamlNode*;

// A mapping entry: the key node (for its position) and the value node.
struct Entry {
  Node key;
  Node value;
  Path path;
};

// Reads one document's nodes with Kubernetes' types. Every node it visits costs one unit of a
// budget, which bounds the work an alias bomb can cause; errors throw Error
// "file:line:col: path: message".
class Reader {
public:
  Reader(std::string file, int line_offset, int64_t node_budget);

  const std::string& file() const { return file_; }

  Mark mark(Node node) const;
  [[noreturn]] void fail(Node node, const Path& path, std::string_view what) const;

  // The entry `key` of `map` (which must be a mapping, or null); nullopt if absent or null.
  std::optional<Entry> child(Node map, const Path& path, std::string_view key);
  // The items of a sequence (null gives none), each with its path.
  std::vector<Entry> items(Node seq, const Path& path);

  void expect_map(Node node, const Path& path) const;
  std::string scalar(Node node, const Path& path) const;
  int64_t integer(Node node, const Path& path, int64_t min, int64_t max) const;
  IntOrPercent int_or_percent(Node node, const Path& path) const;
  bool boolean(Node node, const Path& path) const;
  Labels string_map(Node node, const Path& path);
  std::vector<std::string> strings(Node node, const Path& path);
  LabelSelector selector(Node node, const Path& path);

  // Shorthands: read `key` of `map` if present; opt_integer records its position in `marks`.
  std::optional<int64_t> opt_integer(Node map, const Path& path, MarkKey key, Marks& marks,
                                     int64_t min = 0, int64_t max = INT32_MAX);
  std::string opt_scalar(Node map, const Path& path, std::string_view key);

private:
  void spend(Node node, const Path& path);

  std::string file_;
  int line_offset_;
  int64_t budget_;
};

}  // namespace zerodrop::kube::detail
