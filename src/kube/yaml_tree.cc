#include "kube/yaml_tree.h"

#include <yaml.h>

#include <algorithm>
#include <map>
#include <memory>
#include <string_view>
#include <unordered_set>

namespace zerodrop::kube::detail {
namespace {

// Owns a LibYAML parser or event for the scope of a parse.
struct Parser {
  yaml_parser_t parser;

  Parser() { yaml_parser_initialize(&parser); }

  ~Parser() { yaml_parser_delete(&parser); }
};

struct Event {
  yaml_event_t event;

  ~Event() { yaml_event_delete(&event); }
};

bool null_scalar(const yaml_event_t& e) {
  if (e.data.scalar.style != YAML_PLAIN_SCALAR_STYLE || e.data.scalar.tag != nullptr) {
    return false;
  }
  std::string_view text(reinterpret_cast<const char*>(e.data.scalar.value), e.data.scalar.length);
  return text.empty() || text == "~" || text == "null" || text == "Null" || text == "NULL";
}

YamlError error_of(const yaml_parser_t& p) {
  std::string message = p.problem ? p.problem : "invalid YAML";
  if (p.context) {
    message = std::string(p.context) + ": " + message;
  }
  return YamlError{static_cast<int>(p.problem_mark.line), static_cast<int>(p.problem_mark.column),
                   message};
}

std::string anchor_of(const yaml_char_t* anchor) {
  return anchor ? std::string(reinterpret_cast<const char*>(anchor)) : std::string();
}

bool is_merge_key(const YamlNode* key) {
  return key->is_scalar() && key->plain && key->scalar == "<<";
}

// Replaces the merge keys of `map` ("<<: *base", "<<: [*a, *b]") by the entries they bring, as
// kubectl's YAML reader does: keys written in the map win, then earlier merged maps over later
// ones. Merged maps are already resolved (an anchor is registered when its node ends).
// `budget` bounds the entries copied so that chains of merges cannot grow without limit.
void resolve_merge_keys(YamlNode& map, int64_t& budget) {
  std::vector<const YamlNode*> own;
  std::vector<const YamlNode*> sources;
  for (size_t i = 0; i + 1 < map.items.size(); i += 2) {
    if (!is_merge_key(map.items[i])) {
      own.insert(own.end(), {map.items[i], map.items[i + 1]});
      continue;
    }
    const YamlNode* value = map.items[i + 1];
    if (value->is_sequence()) {
      sources.insert(sources.end(), value->items.begin(), value->items.end());
    } else {
      sources.push_back(value);
    }
  }
  // A set of the keys present, so that a long chain of merges costs its length, not its square.
  std::unordered_set<std::string_view> present;
  for (size_t i = 0; i < own.size(); i += 2) {
    if (own[i]->is_scalar()) {
      present.insert(own[i]->scalar);
    }
  }
  for (const YamlNode* source : sources) {
    if (!source->is_map()) {
      throw YamlError{source->line, source->column,
                      "a merge key (<<) takes a mapping or a list of mappings"};
    }
    budget -= static_cast<int64_t>(source->items.size());
    if (budget < 0) {
      throw YamlError{map.line, map.column, "merge keys (<<) expand beyond the document's limit"};
    }
    for (size_t i = 0; i + 1 < source->items.size(); i += 2) {
      const YamlNode* key = source->items[i];
      if (!key->is_scalar() || present.insert(key->scalar).second) {
        own.insert(own.end(), {source->items[i], source->items[i + 1]});
      }
    }
  }
  map.items = std::move(own);
}

// The parse's state between LibYAML's events, one handler per kind of event: the open sequences
// and maps, the children gathered for each, and the anchors seen so far.
class TreeBuilder {
public:
  // Nodes go into `nodes` (a deque: they never move); the first finished top-level node becomes
  // `root` unless it is set.
  TreeBuilder(std::deque<YamlNode>& nodes, const YamlNode*& root, size_t text_size)
      : nodes_(nodes), root_(root), merge_budget_(100'000 + 64 * static_cast<int64_t>(text_size)) {}

  void scalar(const yaml_event_t& ev) {
    YamlNode* n = add(ev);
    if (null_scalar(ev)) {
      n->type = YamlNode::Type::null;
    } else {
      n->type = YamlNode::Type::scalar;
      n->scalar.assign(reinterpret_cast<const char*>(ev.data.scalar.value), ev.data.scalar.length);
      n->plain = ev.data.scalar.style == YAML_PLAIN_SCALAR_STYLE && !ev.data.scalar.tag;
      merges_ = merges_ || (n->plain && n->scalar == "<<");
    }
    if (ev.data.scalar.anchor) {
      anchors_[anchor_of(ev.data.scalar.anchor)] = n;
    }
    attach(n);
  }

  // A sequence or a map starts.
  void open(const yaml_event_t& ev) {
    if (static_cast<int>(stack_.size()) >= YamlDocument::kMaxDepth) {
      throw YamlError{static_cast<int>(ev.start_mark.line), static_cast<int>(ev.start_mark.column),
                      "nesting deeper than 256 levels"};
    }
    bool sequence = ev.type == YAML_SEQUENCE_START_EVENT;
    YamlNode* n = add(ev);
    n->type = sequence ? YamlNode::Type::sequence : YamlNode::Type::map;
    stack_.push_back(n);
    if (children_.size() < stack_.size()) {
      children_.emplace_back();
    }
    children_[stack_.size() - 1].clear();
    // Registered when the node ends, so that an alias inside it cannot make a cycle.
    stack_anchors_.push_back(
        anchor_of(sequence ? ev.data.sequence_start.anchor : ev.data.mapping_start.anchor));
  }

  // The innermost open sequence or map ends.
  void close() {
    YamlNode* n = stack_.back();
    n->items.assign(children_[stack_.size() - 1].begin(), children_[stack_.size() - 1].end());
    if (n->is_map()) {
      check_unique_keys(*n);
      if (merges_ && std::any_of(n->items.begin(), n->items.end(), is_merge_key)) {
        resolve_merge_keys(*n, merge_budget_);
      }
    }
    stack_.pop_back();
    if (!stack_anchors_.back().empty()) {
      anchors_[stack_anchors_.back()] = n;
    }
    stack_anchors_.pop_back();
    attach(n);
  }

  void alias(const yaml_event_t& ev) {
    auto it = anchors_.find(anchor_of(ev.data.alias.anchor));
    if (it == anchors_.end()) {
      throw YamlError{static_cast<int>(ev.start_mark.line), static_cast<int>(ev.start_mark.column),
                      "unknown or recursive alias *" + anchor_of(ev.data.alias.anchor)};
    }
    attach(it->second);
  }

private:
  YamlNode* add(const yaml_event_t& ev) {
    YamlNode* n = &nodes_.emplace_back();
    n->line = static_cast<int>(ev.start_mark.line);
    n->column = static_cast<int>(ev.start_mark.column);
    return n;
  }

  // Attaches a finished node to its parent, or makes it the root.
  void attach(const YamlNode* node) {
    if (stack_.empty()) {
      if (!root_) {
        root_ = node;
      }
    } else {
      children_[stack_.size() - 1].push_back(node);
    }
  }

  std::deque<YamlNode>& nodes_;
  const YamlNode*& root_;
  std::vector<YamlNode*> stack_;  // open sequences and maps
  std::vector<std::string> stack_anchors_;
  // The children of each open node gather here and are copied once when it ends: one
  // allocation per node instead of one per doubling.
  std::vector<std::vector<const YamlNode*>> children_;
  std::map<std::string, const YamlNode*, std::less<>> anchors_;
  bool merges_ = false;  // whether the open maps hold a merge key
  int64_t merge_budget_;
};

}  // namespace

void YamlDocument::parse(std::string_view text) {
  Parser p;
  yaml_parser_set_input_string(&p.parser, reinterpret_cast<const unsigned char*>(text.data()),
                               text.size());
  TreeBuilder tree(nodes_, root_, text.size());
  for (;;) {
    Event e;
    if (!yaml_parser_parse(&p.parser, &e.event)) {
      throw error_of(p.parser);
    }
    switch (e.event.type) {
      case YAML_STREAM_END_EVENT:
        return;
      case YAML_DOCUMENT_END_EVENT:
        if (root_) {
          return;  // one document per call: the loader splits streams itself
        }
        break;
      case YAML_SCALAR_EVENT:
        tree.scalar(e.event);
        break;
      case YAML_SEQUENCE_START_EVENT:
      case YAML_MAPPING_START_EVENT:
        tree.open(e.event);
        break;
      case YAML_SEQUENCE_END_EVENT:
      case YAML_MAPPING_END_EVENT:
        tree.close();
        break;
      case YAML_ALIAS_EVENT:
        tree.alias(e.event);
        break;
      default:
        break;
    }
  }
}

void check_unique_keys(const YamlNode& map) {
  // YAML forbids a key twice in one mapping, and kubectl rejects it ("mapping key already
  // defined"); reading either value silently would audit something kubectl never applies. The
  // merge key "<<" may repeat. Mappings are small: pairwise up to 32 keys, in place (every mapping
  // of every document passes here: no allocation), sorted beyond.
  auto counted = [](const YamlNode* k) {
    return k->is_scalar() && !(k->plain && k->scalar == "<<");
  };
  auto duplicate = [](const YamlNode* k) {
    return YamlError{k->line, k->column,
                     "duplicate key '" + k->scalar + "' in one mapping (kubectl rejects it)"};
  };
  size_t count = 0;
  for (size_t i = 0; i < map.items.size(); i += 2) {
    count += counted(map.items[i]) ? 1 : 0;
  }
  if (count <= 32) {
    for (size_t i = 2; i < map.items.size(); i += 2) {
      const YamlNode* k = map.items[i];
      for (size_t j = 0; j < i && counted(k); j += 2) {
        if (counted(map.items[j]) && map.items[j]->scalar == k->scalar) {
          throw duplicate(k);
        }
      }
    }
    return;
  }
  std::vector<const YamlNode*> keys;
  for (size_t i = 0; i < map.items.size(); i += 2) {
    if (counted(map.items[i])) {
      keys.push_back(map.items[i]);
    }
  }
  std::stable_sort(keys.begin(), keys.end(),
                   [](const YamlNode* a, const YamlNode* b) { return a->scalar < b->scalar; });
  for (size_t i = 1; i < keys.size(); ++i) {
    if (keys[i]->scalar == keys[i - 1]->scalar) {
      throw duplicate(keys[i]);
    }
  }
}

}  // namespace zerodrop::kube::detail
