#pragma once

#include <map>
#include <string>
#include <vector>

namespace zerodrop::kube {

using Labels = std::map<std::string, std::string>;

// One matchExpressions entry: key In/NotIn values, Exists, DoesNotExist.
struct LabelRequirement {
  enum class Op { in, not_in, exists, does_not_exist };
  std::string key;
  Op op = Op::in;
  std::vector<std::string> values;
};

// A metav1.LabelSelector. As in Kubernetes' LabelSelectorAsSelector, an absent (nil) selector
// matches nothing and a present but empty one ({}) matches everything.
struct LabelSelector {
  bool present = false;
  Labels match_labels;
  std::vector<LabelRequirement> match_expressions;

  bool matches(const Labels& labels) const;
};

// A Service's plain map selector: empty selects nothing (a Service without a selector has its
// endpoints managed by hand), otherwise every pair must be present in `labels`.
bool map_selects(const Labels& selector, const Labels& labels);

}  // namespace zerodrop::kube
