#pragma once

#include <array>
#include <cstddef>
#include <optional>
#include <string>
#include <string_view>

#include "base/enum_names.h"
#include "kube/mark.h"
#include "record/hole.h"

namespace zerodrop::audit {

enum class Severity { info, warning, error };

// Each severity's word in the text output, --fail-on and the config file, indexed by Severity.
inline constexpr auto kSeverityNames =
    std::to_array<std::string_view>({"info", "warning", "error"});
static_assert(kSeverityNames.size() == static_cast<size_t>(Severity::error) + 1,
              "one name per Severity");
// SARIF 2.1.0's `level` for each severity (its "note" is our info), indexed by Severity.
inline constexpr auto kSarifLevels = std::to_array<std::string_view>({"note", "warning", "error"});
static_assert(kSarifLevels.size() == kSeverityNames.size(), "one SARIF level per Severity");

constexpr std::string_view to_string(Severity severity) {
  return kSeverityNames[static_cast<size_t>(severity)];
}

// "info", "warning" or "error"; nullopt otherwise.
constexpr std::optional<Severity> severity_from_string(std::string_view text) {
  return enum_from_name<Severity>(kSeverityNames, text);
}

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
