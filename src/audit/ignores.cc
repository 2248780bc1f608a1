#include "audit/ignores.h"

#include <algorithm>

#include <fmt/format.h>

#include "audit/rule.h"
#include "base/error.h"
#include "base/text.h"
#include "kube/yaml_file.h"

namespace zerodrop::audit {
namespace {

bool glob(std::string_view pattern, std::string_view value) {
  if (pattern.empty() || pattern == "*") {
    return true;
  }
  if (pattern.back() == '*') {
    return value.starts_with(pattern.substr(0, pattern.size() - 1));
  }
  return pattern == value;
}

bool names_finding(std::string_view rule, const Finding& f) {
  rule = trim(rule);
  return rule == "all" || rule == f.rule || (f.hole && rule == record::to_string(*f.hole));
}

bool annotated(const kube::Labels& notes, const Finding& f) {
  auto it = notes.find(kIgnoreAnnotation);
  if (it == notes.end()) {
    return false;
  }
  for (std::string_view rule : split(it->second, ',')) {
    if (names_finding(rule, f)) {
      return true;
    }
  }
  return false;
}

bool known_rule(std::string_view rule) {
  return rule == "all" || find_rule(rule) != nullptr || record::hole_from_string(rule);
}

IgnoreEntry read_entry(const kube::YamlFile& file, const kube::YamlNode& node) {
  IgnoreEntry e;
  for (auto [key_node, value_node] : file.entries(
           node, "an ignore entry is a mapping: {rule, kind, namespace, name, container}")) {
    const std::string& key = file.scalar(*key_node);
    const std::string& value = file.scalar(*value_node);
    if (key == "rule") {
      e.rule = value;
    } else if (key == "kind") {
      e.kind = value;
    } else if (key == "namespace") {
      e.namespace_name = value;
    } else if (key == "name") {
      e.name = value;
    } else if (key == "container") {
      e.container = value;
    } else {
      file.fail(*key_node, fmt::format("unknown ignore field '{}'", key));
    }
  }
  if (!known_rule(e.rule)) {
    file.fail(node, fmt::format("unknown rule '{}' (see 'zerodrop audit --list-rules')", e.rule));
  }
  return e;
}

}  // namespace

bool is_ignored(const Finding& f, const Ignores& ignores, const kube::Labels& annotations,
                const kube::Labels& pod_annotations) {
  if (annotated(annotations, f) || annotated(pod_annotations, f)) {
    return true;
  }
  for (const IgnoreEntry& e : ignores.entries) {
    if (names_finding(e.rule, f) && glob(e.kind, f.object.kind)
        && glob(e.namespace_name, f.object.namespace_name) && glob(e.name, f.object.name)
        && glob(e.container, f.object.container)) {
      return true;
    }
  }
  return false;
}

ConfigFile read_config(const std::string& path) {
  kube::YamlFile file(path);
  ConfigFile config;
  if (file.root().is_null()) {
    return config;
  }
  std::pair<const char*, std::string*> settings[] = {
      {"propagation", &config.propagation},
      {"drain-seconds", &config.drain},
      {"margin", &config.margin},
      {"headroom", &config.headroom},
      {"k8s-version", &config.kube_version},
      {"fail-on", &config.fail_on},
  };
  for (auto [key_node, value] : file.entries(file.root(), "expected a mapping of settings")) {
    const std::string& key = file.scalar(*key_node);
    if (key == "ignore") {
      if (!value->is_sequence()) {
        file.fail(*value, "'ignore' is a list of entries");
      }
      for (const kube::YamlNode* entry : value->items) {
        config.ignores.entries.push_back(read_entry(file, *entry));
      }
      continue;
    }
    auto match = std::find_if(std::begin(settings), std::end(settings),
                              [&](const auto& s) { return key == s.first; });
    if (match == std::end(settings)) {
      file.fail(*key_node, fmt::format("unknown setting '{}'", key));
    }
    *match->second = file.scalar(*value);
  }
  return config;
}

}  // namespace zerodrop::audit
