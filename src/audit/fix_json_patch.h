#pragma once
// --fix for custom resources (Argo Rollout): kubectl and the API server refuse strategic merge
// for them, and a merge patch would replace the whole containers list (image and ports lost).
// An RFC 6902 JSON patch addresses each container by its index instead.

#include <map>
#include <string>
#include <string_view>
#include <vector>

#include "kube/workload.h"

namespace zerodrop::audit {

// How a patch document is applied: strategic merge for the API groups kubectl and the API server
// know (core, apps, extensions, batch, policy, autoscaling), a JSON patch for any other.
enum class PatchType { strategic, json };

PatchType patch_type(const kube::Meta& meta);

std::string_view to_string(PatchType type);

// JSON pointers (RFC 6901) of a workload's pod spec and of one of its containers.
std::string pod_spec_pointer(const kube::Workload& w);
std::string container_pointer(const kube::Workload& w, const kube::Container& c);

// What a --fix plan changes, as YAML block lines relative to each part (the strategic-merge
// patch's own lines; `null` removes a key).
struct PlanParts {
  const std::map<std::string, std::vector<std::string>>& container_lines;  // by container name
  const std::vector<std::string>& spec_lines;
  const std::vector<std::string>& pod_spec_lines;
};

// The same changes as JSON patch operations, one JSON object per element, in order. A key the
// manifest has is patched member by member (`add` replaces one member, `null` becomes `remove`);
// a key it lacks is added whole, so every path's parent exists.
std::vector<std::string> json_patch_ops(const kube::Workload& w, const PlanParts& parts);

}  // namespace zerodrop::audit
