#include "verify/rbac.h"

#include <map>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "base/error.h"

namespace zerodrop::verify {

std::string Permission::text() const {
  return fmt::format("{}{} {}", resource, group.empty() ? "" : "." + group, verb);
}

std::vector<Permission> needed_permissions(Action action, AgentMode agents) {
  std::vector<Permission> needed{
      {"apps", "deployments", "get"},
      {"apps", "deployments", "list"},
      {"apps", "deployments", "watch"},
      {"", "pods", "list"},
      {"", "pods", "watch"},
      {"discovery.k8s.io", "endpointslices", "list"},
      {"discovery.k8s.io", "endpointslices", "watch"},
      {"", "services", "get"},
      {"", "services", "list"},
      {"", "events", "list"},
      {"", "events", "watch"},
  };
  if (action != Action::watch) {
    needed.push_back({"apps", "deployments", "patch"});
  }
  if (agents != AgentMode::none) {
    needed.push_back({"", "configmaps", "create"});  // the run's anchor
    needed.push_back({"", "configmaps", "delete"});
    needed.push_back({"batch", "jobs", "create"});
    needed.push_back({"batch", "jobs", "delete"});
    needed.push_back({"", "pods/log", "get"});
  }
  return needed;
}

std::string role_yaml(const std::string& namespace_name, Action action, AgentMode agents) {
  // Group the verbs per (group, resource), in the order first needed.
  std::vector<std::pair<std::string, std::string>> order;
  std::map<std::pair<std::string, std::string>, std::vector<std::string>> verbs;
  std::vector<Permission> all = needed_permissions(action, agents);
  if (agents != AgentMode::none) {  // --cleanup finds a crashed run's objects by label
    all.push_back({"", "configmaps", "list"});
    all.push_back({"batch", "jobs", "list"});
  }
  for (const Permission& p : all) {
    auto key = std::make_pair(p.group, p.resource);
    if (!verbs.contains(key)) {
      order.push_back(key);
    }
    verbs[key].push_back(p.verb);
  }
  std::string rules;
  for (const auto& key : order) {
    std::string list;
    for (const std::string& v : verbs[key]) {
      list += (list.empty() ? "" : ", ") + v;
    }
    rules += fmt::format("- apiGroups: [\"{}\"]\n  resources: [{}]\n  verbs: [{}]\n", key.first,
                         key.second, list);
  }
  return fmt::format(
      R"(# What 'zerodrop verify' needs in namespace {0} (apply, then bind it to the user).
apiVersion: rbac.authorization.k8s.io/v1
kind: Role
metadata:
  name: zerodrop-verify
  namespace: {0}
rules:
{1}---
apiVersion: rbac.authorization.k8s.io/v1
kind: RoleBinding
metadata:
  name: zerodrop-verify
  namespace: {0}
roleRef:
  apiGroup: rbac.authorization.k8s.io
  kind: Role
  name: zerodrop-verify
subjects:
- kind: User          # or Group / ServiceAccount
  name: YOUR-USER
  apiGroup: rbac.authorization.k8s.io
)",
      namespace_name, rules);
}

std::vector<Permission> missing_permissions(const ApiClient& client,
                                            const std::string& namespace_name,
                                            const std::vector<Permission>& needed) {
  std::vector<Permission> missing;
  for (const Permission& p : needed) {
    nlohmann::json review = {{"apiVersion", "authorization.k8s.io/v1"},
                             {"kind", "SelfSubjectAccessReview"},
                             {"spec",
                              {{"resourceAttributes",
                                {{"namespace", namespace_name},
                                 {"verb", p.verb},
                                 {"group", p.group},
                                 {"resource", p.resource.substr(0, p.resource.find('/'))}}}}}};
    if (size_t slash = p.resource.find('/'); slash != std::string::npos) {
      review["spec"]["resourceAttributes"]["subresource"] = p.resource.substr(slash + 1);
    }
    ApiResponse response = client.request(
        Method::post, "/apis/authorization.k8s.io/v1/selfsubjectaccessreviews", review.dump());
    if (!response.ok()) {
      throw Error(fmt::format("cannot check permissions (SelfSubjectAccessReview): {}",
                              error_text(response)));
    }
    auto answer = nlohmann::json::parse(response.body, nullptr, false);
    bool allowed = answer.is_object() && answer.contains("status") && answer["status"].is_object()
                   && answer["status"].value("allowed", false);
    if (!allowed) {
      missing.push_back(p);
    }
  }
  return missing;
}

}  // namespace zerodrop::verify
