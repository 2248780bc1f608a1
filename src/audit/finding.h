#pragma once

#include <optional>
#include <string>
#include <string_view>

#include "kube/mark.h"
#include "record/hole.h"

namespace zerodrop::audit {

enum class Severity { info, warning, error };

std::string_view to_string(Severity severity);
// "info", "warning" or "error"; nullopt otherwise.
std::optional<Severity> severity_from_string(std::string_view text);

// The object (and container) a finding is about.
struct ObjectRef {
  std::string kind;
  std::string namespace_name;
  std::string name;
  std::string container;  // "" for object-level findings
};

// One problem found in the input: which rule, where (file:line:column of the field it is about),
// what with the numbers, and the one-line fix.
struct Finding {
  std::string_view rule;  // a RuleInfo id (static storage)
  std::optional<record::Hole> hole;
  Severity severity = Severity::warning;
  ObjectRef object;
  std::string file;
  kube::Mark mark;
  std::string message;
  std::string fix;
};

}  // namespace zerodrop::audit
