#include "audit/fix_copy_in.h"

#include <fmt/format.h>
#include <nlohmann/json.hpp>

namespace zerodrop::audit {
namespace {

using nlohmann::json;

constexpr const char* kVolume = "zerodrop";
constexpr const char* kImage = "ZERODROP_IMAGE";

json copy_container() {
  return {{"name", "zerodrop-copy"},
          {"image", kImage},
          {"command", {"/zerodrop", "copy-self", "/target"}},
          {"volumeMounts", {{{"name", kVolume}, {"mountPath", "/target"}}}}};
}

json mount() {
  return {{"name", kVolume}, {"mountPath", "/zerodrop"}};
}

json pre_stop(int64_t seconds) {
  return {{"exec", {{"command", {"/zerodrop/zerodrop", "sleep", std::to_string(seconds)}}}}};
}

const kube::Container* find(const kube::Workload& w, const std::string& name) {
  for (const kube::Container& c : w.containers) {
    if (c.name == name) {
      return &c;
    }
  }
  return nullptr;
}

// An RFC 6902 operation appending `item` to the list at `path`, or adding the list when the
// manifest has none (`has`): a custom resource cannot be merged by key.
json append(const std::string& path, bool has, const json& item) {
  return has ? json{{"op", "add"}, {"path", path + "/-"}, {"value", item}}
             : json{{"op", "add"}, {"path", path}, {"value", json::array({item})}};
}

std::vector<std::string> json_patch(const kube::Workload& w,
                                    const std::vector<std::string>& containers, int64_t seconds) {
  std::string spec = pod_spec_pointer(w);
  std::vector<json> ops = {
      append(spec + "/volumes", w.marks.has("pod.volumes"),
             {{"name", kVolume}, {"emptyDir", json::object()}}),
      append(spec + "/initContainers", w.marks.has("pod.initContainers"), copy_container())};
  for (const std::string& name : containers) {
    const kube::Container* c = find(w, name);
    std::string at = container_pointer(w, *c);
    ops.push_back(append(at + "/volumeMounts", c->marks.has("volumeMounts"), mount()));
    // The workload's own patch set lifecycle.preStop: replaced here.
    ops.push_back(
        {{"op", "add"}, {"path", at + "/lifecycle/preStop"}, {"value", pre_stop(seconds)}});
  }
  std::vector<std::string> lines;
  for (const json& op : ops) {
    lines.push_back("- " + op.dump());
  }
  return lines;
}

// Strategic merge: volumes, init containers, containers and volume mounts merge by key, so
// nothing the pod already has is replaced.
std::vector<std::string> strategic_patch(const kube::Workload& w,
                                         const std::vector<std::string>& containers,
                                         int64_t seconds) {
  std::vector<std::string> lines = {
      fmt::format("apiVersion: {}", w.meta.api_version), fmt::format("kind: {}", w.meta.kind),
      "metadata:", fmt::format("  name: {}", json(w.meta.name).dump())};
  if (!w.meta.namespace_name.empty()) {
    lines.push_back(fmt::format("  namespace: {}", json(w.meta.namespace_name).dump()));
  }
  std::string in = "  ";
  lines.push_back("spec:");
  if (w.kind != kube::WorkloadKind::pod) {
    lines.insert(lines.end(), {"  template:", "    spec:"});
    in = "      ";
  }
  lines.push_back(in + "volumes:");
  lines.push_back(in + fmt::format("  - {{name: {}, emptyDir: {{}}}}", kVolume));
  auto container = [&](const std::string& name) {
    lines.push_back(in + "  - name: " + json(name).dump());
    lines.push_back(
        in + fmt::format("    volumeMounts: [{{name: {}, mountPath: /zerodrop}}]", kVolume));
    lines.push_back(
        in
        + fmt::format("    lifecycle: {{preStop: {{exec: {{command: [\"/zerodrop/zerodrop\", "
                      "\"sleep\", \"{}\"]}}}}}}",
                      seconds));
  };
  lines.push_back(in + "initContainers:");
  lines.push_back(in + "  - name: zerodrop-copy");
  lines.push_back(in + fmt::format("    image: {}", kImage));
  lines.push_back(in + "    command: [\"/zerodrop\", \"copy-self\", \"/target\"]");
  lines.push_back(in
                  + fmt::format("    volumeMounts: [{{name: {}, mountPath: /target}}]", kVolume));
  for (bool sidecars : {true, false}) {
    bool header = sidecars;  // sidecars join the copy under initContainers
    for (const std::string& name : containers) {
      if (find(w, name)->sidecar != sidecars) {
        continue;
      }
      if (!header) {
        lines.push_back(in + "containers:");
        header = true;
      }
      container(name);
    }
  }
  return lines;
}

}  // namespace

std::string copy_in_advice(const kube::Workload& w, const std::vector<std::string>& containers,
                           int64_t seconds, PatchType type, const std::string& apply) {
  std::vector<std::string> quoted;
  for (const std::string& name : containers) {
    quoted.push_back("'" + name + "'");
  }
  std::string out = fmt::format(
      "## zerodrop --fix advice: {} {}: for an image with no sleep program (container {}), an\n"
      "## init container copies the static zerodrop into a shared emptyDir (zerodrop copy-self:\n"
      "## the zerodrop image has no cp either) and preStop runs /zerodrop/zerodrop sleep {}.\n"
      "## After the patch above: set {} to an image holding /zerodrop (deploy/Dockerfile\n"
      "## --target zerodrop), save this document, sed 's/^# //' it, then\n",
      w.meta.kind, w.meta.name, fmt::join(quoted, ", "), seconds, kImage);
  out += "#" + apply;  // "## apply:": sed leaves it a comment
  for (const std::string& line : type == PatchType::json
                                     ? json_patch(w, containers, seconds)
                                     : strategic_patch(w, containers, seconds)) {
    out += "# " + line + "\n";
  }
  return out;
}

}  // namespace zerodrop::audit
