#pragma once
// Internal to src/kube: a YAML document as a tree of plain nodes, built from LibYAML's event
// parser. Hand-written on top of LibYAML rather than using yaml-cpp's DOM because yaml-cpp's
// scanner and shared_ptr nodes cost 8x more per document (bench/audit_throughput.sh), and the
// auditor reads tens of thousands of documents per run.

#include <deque>
#include <string>
#include <string_view>
#include <vector>

namespace zerodrop::kube::detail {

// One node. Aliases are the anchored node itself (shared, never copied), as in yaml-cpp.
struct YamlNode {
  enum class Type : unsigned char { null, scalar, sequence, map };
  Type type = Type::null;
  bool plain = true;  // a scalar written without quotes or tag (so "5" is a number)
  int line = 0;       // 0-based position of the node's first token
  int column = 0;
  std::string scalar;
  std::vector<const YamlNode*> items;  // sequence items, or map keys and values interleaved

  bool is_null() const { return type == Type::null; }

  bool is_scalar() const { return type == Type::scalar; }

  bool is_sequence() const { return type == Type::sequence; }

  bool is_map() const { return type == Type::map; }
};

// A syntax error: 0-based position and LibYAML's message.
struct YamlError {
  int line = 0;
  int column = 0;
  std::string message;
};

// One parsed document; owns its nodes. Not copyable: nodes point at each other.
class YamlDocument {
public:
  YamlDocument() = default;
  YamlDocument(const YamlDocument&) = delete;
  YamlDocument& operator=(const YamlDocument&) = delete;

  // Parses the first document of `text` (later ones are ignored). Throws YamlError on a syntax
  // error, an unknown alias or nesting deeper than kMaxDepth. An empty text gives a null root.
  void parse(std::string_view text);

  const YamlNode* root() const { return root_; }

  static constexpr int kMaxDepth = 256;

private:
  std::deque<YamlNode> nodes_;
  const YamlNode* root_ = nullptr;
};

// Throws YamlError at the second occurrence of a key in `map` (the merge key "<<" excepted).
void check_unique_keys(const YamlNode& map);

}  // namespace zerodrop::kube::detail
