#include "audit/ignores.h"

#include <fmt/format.h>
#include <yaml-cpp/yaml.h>

#include "audit/rule.h"
#include "base/error.h"
#include "base/text.h"

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

[[noreturn]] void fail(const std::string& path, const YAML::Node& node, std::string_view what) {
  YAML::Mark m = node.Mark();
  throw Error(fmt::format("{}:{}:{}: {}", path, m.line + 1, m.column + 1, what));
}

std::string text_of(const std::string& path, const YAML::Node& node) {
  if (!node.IsScalar()) {
    fail(path, node, "expected a string");
  }
  return node.Scalar();
}

IgnoreEntry read_entry(const std::string& path, const YAML::Node& node) {
  if (!node.IsMap()) {
    fail(path, node, "an ignore entry is a mapping: {rule, kind, namespace, name, container}");
  }
  IgnoreEntry e;
  for (const auto& kv : node) {
    std::string key = text_of(path, kv.first);
    std::string value = text_of(path, kv.second);
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
      fail(path, kv.first, fmt::format("unknown ignore field '{}'", key));
    }
  }
  if (!known_rule(e.rule)) {
    fail(path, node, fmt::format("unknown rule '{}' (see 'zerodrop audit --list-rules')", e.rule));
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
  YAML::Node root;
  try {
    root = YAML::LoadFile(path);
  } catch (const YAML::BadFile&) {
    throw Error(fmt::format("{}: cannot read the config file", path));
  } catch (const YAML::Exception& e) {
    throw Error(fmt::format("{}:{}:{}: {}", path, e.mark.line + 1, e.mark.column + 1, e.msg));
  }
  ConfigFile config;
  if (root.IsNull()) {
    return config;
  }
  if (!root.IsMap()) {
    fail(path, root, "expected a mapping of settings");
  }
  std::pair<const char*, std::string*> settings[] = {
      {"propagation", &config.propagation},
      {"drain-seconds", &config.drain},
      {"margin", &config.margin},
      {"headroom", &config.headroom},
      {"k8s-version", &config.kube_version},
      {"fail-on", &config.fail_on},
  };
  for (const auto& kv : root) {
    std::string key = text_of(path, kv.first);
    if (key == "ignore") {
      if (!kv.second.IsSequence()) {
        fail(path, kv.second, "'ignore' is a list of entries");
      }
      for (const YAML::Node& entry : kv.second) {
        config.ignores.entries.push_back(read_entry(path, entry));
      }
      continue;
    }
    auto match = std::find_if(std::begin(settings), std::end(settings),
                              [&](const auto& s) { return key == s.first; });
    if (match == std::end(settings)) {
      fail(path, kv.first, fmt::format("unknown setting '{}'", key));
    }
    *match->second = text_of(path, kv.second);
  }
  return config;
}

}  // namespace zerodrop::audit
