#pragma once

#include <string_view>
#include <utility>
#include <vector>

namespace zerodrop::kube {

// A position in a source file, 1-based as editors show it; 0 means unknown.
struct Mark {
  int line = 0;
  int column = 0;
};

// Source positions of the fields a struct was read from, keyed by their YAML path relative to
// the struct ("lifecycle.preStop", "httpGet.port"). Keys must be string literals (static
// storage): the loader stores views, not copies, to stay fast.
struct Marks {
  Mark self;  // the struct's own node
  std::vector<std::pair<std::string_view, Mark>> fields;

  // The field's position, or `self` when the field was not written.
  Mark at(std::string_view field) const {
    for (const auto& [key, mark] : fields) {
      if (key == field) {
        return mark;
      }
    }
    return self;
  }

  bool has(std::string_view field) const {
    for (const auto& entry : fields) {
      if (entry.first == field) {
        return true;
      }
    }
    return false;
  }

  void set(std::string_view field, Mark mark) { fields.emplace_back(field, mark); }
};

}  // namespace zerodrop::kube
