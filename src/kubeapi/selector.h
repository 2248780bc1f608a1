#pragma once

#include <string>
#include <string_view>
#include <vector>

#include <nlohmann/json_fwd.hpp>

namespace zerodrop::kubeapi {

// A list or watch filter: labelSelector (`a=b`, `a==b`, `a!=b`, `a in (x,y)`, `a notin (x)`,
// `a`, `!a`) and fieldSelector (`metadata.name=web`, `involvedObject.uid!=…`: a dotted path
// compared as text), as the API server reads them from the query.
class Selector {
public:
  // Throws Error naming the selector on a requirement it cannot read.
  static Selector parse(std::string_view labels, std::string_view fields);

  bool matches(const nlohmann::json& object) const;

  bool empty() const { return requirements_.empty(); }

private:
  struct Requirement {
    enum class Op { equals, not_equals, in, not_in, exists, absent };
    bool field = false;  // a field path, else a label key
    std::string key;
    Op op = Op::equals;
    std::vector<std::string> values;
  };

  static void add(std::string_view text, bool field, std::vector<Requirement>& out);

  std::vector<Requirement> requirements_;
};

// A labelSelector object ({matchLabels, matchExpressions}) as the text Selector::parse reads
// ("app=web,tier in (a,b)"). Throws Error on an operator it does not know.
std::string selector_text(const nlohmann::json& selector);

}  // namespace zerodrop::kubeapi
