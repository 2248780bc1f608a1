#pragma once

#include <string>
#include <vector>

#include <nlohmann/json_fwd.hpp>

namespace zerodrop::kubeapi {

// How the lab serves a resource.
enum class Served {
  lab,     // derived from the lab's state: read-only but for the writes the lab acts on
  stored,  // kept as clients write it (ConfigMaps, RBAC objects): create, update, patch, delete
  review,  // create only, answered at once (SelfSubjectAccessReview)
};

// One resource of the API the lab serves.
struct ResourceType {
  std::string group;    // "" for core
  std::string version;  // "v1"
  std::string name;     // plural: "pods"
  std::string singular;
  std::string kind;
  bool namespaced = true;
  Served served = Served::lab;
  std::vector<std::string> verbs;
  std::vector<std::string> short_names;
  std::string store_key;  // the Store's key; events.k8s.io shares core's events

  std::string api_version() const { return group.empty() ? version : group + "/" + version; }
};

const std::vector<ResourceType>& resource_types();
// The resource named `name` in `group`/`version`, if served.
const ResourceType* find_resource(const std::string& group, const std::string& version,
                                  const std::string& name);

// Legacy discovery documents: /api (APIVersions), /apis (APIGroupList), and a group version's
// APIResourceList (nullopt-like null json when the group version is not served).
nlohmann::json api_versions(const std::string& server_address);
nlohmann::json api_group_list();
nlohmann::json api_resource_list(const std::string& group, const std::string& version);
// /version for Kubernetes "1.32".
nlohmann::json version_info(const std::string& k8s_version);

}  // namespace zerodrop::kubeapi
