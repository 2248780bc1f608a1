#include "kube/label_selector.h"

#include <algorithm>

namespace zerodrop::kube {
namespace {

bool requirement_holds(const LabelRequirement& r, const Labels& labels) {
  auto it = labels.find(r.key);
  bool has = it != labels.end();
  auto listed = [&] {
    return has && std::find(r.values.begin(), r.values.end(), it->second) != r.values.end();
  };
  switch (r.op) {
    case LabelRequirement::Op::in:
      return listed();
    case LabelRequirement::Op::not_in:
      // NotIn also matches labels without the key, as in k8s.io/apimachinery/pkg/labels.
      return !listed();
    case LabelRequirement::Op::exists:
      return has;
    case LabelRequirement::Op::does_not_exist:
      return !has;
  }
  return false;
}

}  // namespace

bool LabelSelector::matches(const Labels& labels) const {
  if (!present) {
    return false;
  }
  for (const auto& [key, value] : match_labels) {
    auto it = labels.find(key);
    if (it == labels.end() || it->second != value) {
      return false;
    }
  }
  return std::all_of(match_expressions.begin(), match_expressions.end(),
                     [&](const LabelRequirement& r) { return requirement_holds(r, labels); });
}

bool map_selects(const Labels& selector, const Labels& labels) {
  if (selector.empty()) {
    return false;
  }
  for (const auto& [key, value] : selector) {
    auto it = labels.find(key);
    if (it == labels.end() || it->second != value) {
      return false;
    }
  }
  return true;
}

}  // namespace zerodrop::kube
