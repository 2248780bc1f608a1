#include "kubeapi/discovery.h"

#include <algorithm>

#include <nlohmann/json.hpp>

namespace zerodrop::kubeapi {

using nlohmann::json;

namespace {

const std::vector<std::string> kRead = {"get", "list", "watch"};
const std::vector<std::string> kStore = {"create", "delete", "get",  "list",
                                         "patch",  "update", "watch"};

std::vector<ResourceType> make_types() {
  using V = std::vector<std::string>;
  return {
      {"",
       "v1",
       "pods",
       "pod",
       "Pod",
       true,
       Served::lab,
       V{"delete", "get", "list", "watch"},
       {"po"},
       "pods"},
      {"", "v1", "pods/log", "", "Pod", true, Served::lab, V{"get"}, {}, ""},
      {"", "v1", "services", "service", "Service", true, Served::stored, kStore, {"svc"}, "services"},
      {"", "v1", "events", "event", "Event", true, Served::stored, kStore, {"ev"}, "events"},
      {"", "v1", "nodes", "node", "Node", false, Served::lab, kRead, {"no"}, "nodes"},
      {"",
       "v1",
       "namespaces",
       "namespace",
       "Namespace",
       false,
       Served::stored,
       kStore,
       {"ns"},
       "namespaces"},
      {"",
       "v1",
       "configmaps",
       "configmap",
       "ConfigMap",
       true,
       Served::stored,
       kStore,
       {"cm"},
       "configmaps"},
      {"",
       "v1",
       "serviceaccounts",
       "serviceaccount",
       "ServiceAccount",
       true,
       Served::stored,
       kStore,
       {"sa"},
       "serviceaccounts"},
      {"apps",
       "v1",
       "deployments",
       "deployment",
       "Deployment",
       true,
       Served::lab,
       V{"create", "delete", "get", "list", "patch", "update", "watch"},
       {"deploy"},
       "apps/deployments"},
      {"apps",
       "v1",
       "deployments/scale",
       "",
       "Scale",
       true,
       Served::lab,
       V{"get", "patch", "update"},
       {},
       "apps/deployments"},
      {"apps",
       "v1",
       "replicasets",
       "replicaset",
       "ReplicaSet",
       true,
       Served::lab,
       kRead,
       {"rs"},
       "apps/replicasets"},
      {"apps",
       "v1",
       "daemonsets",
       "daemonset",
       "DaemonSet",
       true,
       Served::stored,
       kStore,
       {"ds"},
       "apps/daemonsets"},
      {"discovery.k8s.io",
       "v1",
       "endpointslices",
       "endpointslice",
       "EndpointSlice",
       true,
       Served::lab,
       kRead,
       {},
       "discovery.k8s.io/endpointslices"},
      {"batch",
       "v1",
       "jobs",
       "job",
       "Job",
       true,
       Served::lab,
       V{"create", "delete", "get", "list", "watch"},
       {},
       "batch/jobs"},
      {"events.k8s.io",
       "v1",
       "events",
       "event",
       "Event",
       true,
       Served::stored,
       kStore,
       {"ev"},
       "events"},
      {"authorization.k8s.io",
       "v1",
       "selfsubjectaccessreviews",
       "selfsubjectaccessreview",
       "SelfSubjectAccessReview",
       false,
       Served::review,
       V{"create"},
       {},
       ""},
      {"rbac.authorization.k8s.io",
       "v1",
       "roles",
       "role",
       "Role",
       true,
       Served::stored,
       kStore,
       {},
       "rbac/roles"},
      {"rbac.authorization.k8s.io",
       "v1",
       "rolebindings",
       "rolebinding",
       "RoleBinding",
       true,
       Served::stored,
       kStore,
       {},
       "rbac/rolebindings"},
      {"rbac.authorization.k8s.io",
       "v1",
       "clusterroles",
       "clusterrole",
       "ClusterRole",
       false,
       Served::stored,
       kStore,
       {},
       "rbac/clusterroles"},
      {"rbac.authorization.k8s.io",
       "v1",
       "clusterrolebindings",
       "clusterrolebinding",
       "ClusterRoleBinding",
       false,
       Served::stored,
       kStore,
       {},
       "rbac/clusterrolebindings"},
      {"",
       "v1",
       "persistentvolumeclaims",
       "persistentvolumeclaim",
       "PersistentVolumeClaim",
       true,
       Served::stored,
       kStore,
       {"pvc"},
       "persistentvolumeclaims"},
      {"coordination.k8s.io",
       "v1",
       "leases",
       "lease",
       "Lease",
       true,
       Served::stored,
       kStore,
       {},
       "coordination.k8s.io/leases"},
  };
}

// The served group versions, core first, in the order kubectl prefers them.
std::vector<std::string> groups() {
  std::vector<std::string> out;
  for (const ResourceType& t : resource_types()) {
    if (!t.group.empty() && std::find(out.begin(), out.end(), t.group) == out.end()) {
      out.push_back(t.group);
    }
  }
  return out;
}

}  // namespace

const std::vector<ResourceType>& resource_types() {
  static const std::vector<ResourceType> types = make_types();
  return types;
}

const ResourceType* find_resource(const std::string& group, const std::string& version,
                                  const std::string& name) {
  for (const ResourceType& t : resource_types()) {
    if (t.group == group && t.version == version && t.name == name) {
      return &t;
    }
  }
  return nullptr;
}

json api_versions(const std::string& server_address) {
  json cidrs = json::array();
  if (!server_address.empty()) {
    cidrs.push_back({{"clientCIDR", "0.0.0.0/0"}, {"serverAddress", server_address}});
  }
  return {{"kind", "APIVersions"}, {"versions", {"v1"}}, {"serverAddressByClientCIDRs", cidrs}};
}

json api_group_list() {
  json list = {{"kind", "APIGroupList"}, {"apiVersion", "v1"}, {"groups", json::array()}};
  for (const std::string& g : groups()) {
    json v = {{"groupVersion", g + "/v1"}, {"version", "v1"}};
    list["groups"].push_back({{"name", g}, {"versions", {v}}, {"preferredVersion", v}});
  }
  return list;
}

json api_resource_list(const std::string& group, const std::string& version) {
  json list = {{"kind", "APIResourceList"},
               {"apiVersion", "v1"},
               {"groupVersion", group.empty() ? version : group + "/" + version},
               {"resources", json::array()}};
  for (const ResourceType& t : resource_types()) {
    if (t.group != group || t.version != version) {
      continue;
    }
    json r = {{"name", t.name},
              {"singularName", t.singular},
              {"namespaced", t.namespaced},
              {"kind", t.kind},
              {"verbs", t.verbs}};
    if (!t.short_names.empty()) {
      r["shortNames"] = t.short_names;
    }
    if (t.name == "deployments/scale") {
      r["group"] = "autoscaling";
      r["version"] = "v1";
    }
    list["resources"].push_back(r);
  }
  return list["resources"].empty() ? json() : list;
}

json version_info(const std::string& k8s_version) {
  size_t dot = k8s_version.find('.');
  std::string minor = dot == std::string::npos ? "0" : k8s_version.substr(dot + 1);
  return {{"major", k8s_version.substr(0, dot)},
          {"minor", minor},
          {"gitVersion", "v" + k8s_version + ".0-zerodrop-lab"},
          {"gitCommit", ""},
          {"gitTreeState", "clean"},
          {"buildDate", "2026-01-01T00:00:00Z"},
          {"goVersion", "none"},
          {"compiler", "gc"},
          {"platform", "linux/amd64"}};
}

}  // namespace zerodrop::kubeapi
