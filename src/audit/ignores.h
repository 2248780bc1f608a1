#pragma once

#include <string>
#include <vector>

#include "audit/finding.h"
#include "kube/label_selector.h"

namespace zerodrop::audit {

// One ignore entry: a rule id, a hole id or "all", limited to objects matching every field that
// is set ("*" or "" matches anything; a trailing "*" matches a prefix).
struct IgnoreEntry {
  std::string rule;
  std::string kind;
  std::string namespace_name;
  std::string name;
  std::string container;
};

struct Ignores {
  std::vector<IgnoreEntry> entries;
};

// The annotation that ignores rules on one workload (or its pod template): "rule-id,hole-id".
inline constexpr const char* kIgnoreAnnotation = "zerodrop.dev/ignore";

// True when the finding is ignored by `ignores` or by the object's annotations.
bool is_ignored(const Finding& finding, const Ignores& ignores, const kube::Labels& annotations,
                const kube::Labels& pod_annotations);

// Reads ignores and defaults from a config file (see docs/audit.md). Throws Error
// "file:line:col: message" on invalid content, naming unknown rule ids.
struct ConfigFile {
  Ignores ignores;
  std::string propagation, drain, margin, headroom, kube_version, fail_on;  // "" = not set
};

ConfigFile read_config(const std::string& path);

}  // namespace zerodrop::audit
