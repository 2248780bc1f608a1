#include "audit/fix_json_patch.h"

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "kube/yaml_tree.h"

namespace zerodrop::audit {
namespace {

using kube::detail::YamlNode;
using nlohmann::json;

json to_json(const YamlNode& node) {
  if (node.is_null()) {
    return nullptr;
  }
  if (node.is_scalar()) {
    const std::string& s = node.scalar;
    bool digits = node.plain && !s.empty() && s.size() < 10
                  && s.find_first_not_of("0123456789") == std::string::npos;
    return digits ? json(std::stoll(s)) : json(s);
  }
  json out = node.is_map() ? json::object() : json::array();
  for (size_t i = 0; i < node.items.size(); i += node.is_map() ? 2 : 1) {
    if (node.is_map()) {
      out[node.items[i]->scalar] = to_json(*node.items[i + 1]);
    } else {
      out.push_back(to_json(*node.items[i]));
    }
  }
  return out;
}

// The plan's own YAML lines read back: fix.cc writes them, so they always parse.
json parse_lines(const std::vector<std::string>& lines) {
  std::string text;
  for (const std::string& line : lines) {
    text += line + '\n';
  }
  kube::detail::YamlDocument doc;
  doc.parse(text);
  return doc.root() != nullptr && doc.root()->is_map() ? to_json(*doc.root()) : json::object();
}

json without_nulls(json value) {
  if (value.is_object()) {
    for (auto it = value.begin(); it != value.end();) {
      if (it->is_null()) {
        it = value.erase(it);
      } else {
        *it = without_nulls(*it);
        ++it;
      }
    }
  }
  return value;
}

std::string escape(std::string_view key) {  // RFC 6901: "~" is "~0", "/" is "~1"
  std::string out;
  for (char c : key) {
    out += c == '~' ? "~0" : c == '/' ? "~1" : std::string(1, c);
  }
  return out;
}

json handler_shape(const kube::Handler& h) {
  return json{{std::string(kube::to_string(h.kind)), json::object()}};
}

// The keys of a container that a fix may patch member by member.
json container_shape(const kube::Container& c) {
  json shape = json::object();
  if (c.marks.has("lifecycle")) {
    shape["lifecycle"] = json::object();
    if (c.pre_stop) {
      shape["lifecycle"]["preStop"] = handler_shape(*c.pre_stop);
    }
  }
  for (const auto& [key, probe] : {std::pair{"readinessProbe", &c.readiness_probe},
                                   std::pair{"livenessProbe", &c.liveness_probe},
                                   std::pair{"startupProbe", &c.startup_probe}}) {
    if (*probe) {
      shape[key] = handler_shape((*probe)->handler);
    }
  }
  return shape;
}

// What the manifest holds of the objects a fix patches, as empty objects: where a patch must
// go member by member rather than replace. Leaves are not needed: `add` replaces a member.
json shape_of(const kube::Workload& w) {
  json shape = json::object();
  if (w.marks.has("spec")) {
    shape["spec"] = json::object();
  }
  const kube::Strategy& s = w.strategy;
  if (s.marks.self.line != 0) {
    bool update =
        w.kind == kube::WorkloadKind::stateful_set || w.kind == kube::WorkloadKind::daemon_set;
    json& strategy = shape["spec"][update ? "updateStrategy" : "strategy"] = json::object();
    for (kube::MarkKey key : {kube::MarkKey("rollingUpdate"), kube::MarkKey("canary")}) {
      if (s.marks.has(key)) {
        strategy[std::string(key.name())] = json::object();
      }
    }
  }
  if (!w.marks.has("pod.spec")) {
    return shape;
  }
  shape[json::json_pointer(pod_spec_pointer(w))] = json::object();
  for (const kube::Container& c : w.containers) {
    json::json_pointer list(container_pointer(w, c));
    json& items = shape[list.parent_pointer()];
    while (items.size() < static_cast<size_t>(c.list_index)) {
      items.push_back(json::object());  // containers the audit does not keep (init containers)
    }
    shape[list] = container_shape(c);
  }
  return shape;
}

// Operations that set `value` at `path`: an object the manifest has is merged member by member,
// anything else is added whole (without its nulls, which only remove).
void merge_ops(const json& shape, const std::string& path, const json& value, json& ops) {
  if (!value.is_object() || !shape.contains(json::json_pointer(path))) {
    ops.push_back({{"op", "add"}, {"path", path}, {"value", without_nulls(value)}});
    return;
  }
  for (const auto& [key, member] : value.items()) {
    std::string child = path + "/" + escape(key);
    if (!member.is_null()) {
      merge_ops(shape, child, member, ops);
    } else if (shape.contains(json::json_pointer(child))) {
      ops.push_back({{"op", "remove"}, {"path", child}});
    }
  }
}

}  // namespace

std::string pod_spec_pointer(const kube::Workload& w) {
  switch (w.kind) {
    case kube::WorkloadKind::pod:
      return "/spec";
    case kube::WorkloadKind::cron_job:
      return "/spec/jobTemplate/spec/template/spec";
    default:
      return "/spec/template/spec";
  }
}

std::string container_pointer(const kube::Workload& w, const kube::Container& c) {
  return fmt::format("{}/{}/{}", pod_spec_pointer(w), c.sidecar ? "initContainers" : "containers",
                     c.list_index);
}

PatchType patch_type(const kube::Meta& meta) {
  auto slash = meta.api_version.find('/');
  std::string_view group =
      slash == std::string::npos ? "" : std::string_view(meta.api_version).substr(0, slash);
  for (std::string_view known : {"", "apps", "extensions", "batch", "policy", "autoscaling"}) {
    if (group == known) {
      return PatchType::strategic;
    }
  }
  return PatchType::json;
}

std::string_view to_string(PatchType type) {
  return type == PatchType::strategic ? "strategic" : "json";
}

std::vector<std::string> json_patch_ops(const kube::Workload& w, const PlanParts& parts) {
  json shape = shape_of(w);
  // One object holding the spec and pod spec changes, merged from the root; the containers
  // (a list, which JSON patch addresses by index) after it.
  json patch = json::object();
  json spec = parse_lines(parts.spec_lines);
  for (const auto& [key, value] : spec.items()) {
    patch["spec"][key] = value;
  }
  json pod_spec = parse_lines(parts.pod_spec_lines);
  for (const auto& [key, value] : pod_spec.items()) {
    patch[json::json_pointer(pod_spec_pointer(w) + "/" + escape(key))] = value;
  }
  json ops = json::array();
  for (const auto& [key, value] : patch.items()) {
    merge_ops(shape, "/" + escape(key), value, ops);
  }
  for (const kube::Container& c : w.containers) {
    auto it = parts.container_lines.find(c.name);
    if (it != parts.container_lines.end() && !it->second.empty()) {
      json changes = parse_lines(it->second);
      merge_ops(shape, container_pointer(w, c), changes, ops);
    }
  }
  std::vector<std::string> out;
  for (const json& op : ops) {
    out.push_back(op.dump());
  }
  return out;
}

}  // namespace zerodrop::audit
