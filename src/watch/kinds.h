#pragma once

#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "verify/api_client.h"
#include "verify/rbac.h"

namespace zerodrop::watch {

// A workload kind watch follows, and where the API serves it.
struct WorkloadResource {
  std::string kind;      // "Deployment", "StatefulSet", "DaemonSet", "Rollout"
  std::string group;     // "apps", "argoproj.io"
  std::string version;   // "v1", "v1alpha1"
  std::string resource;  // "deployments", ...

  // "/apis/apps/v1" + `prefix` ("" or "/namespaces/NS") + "/deployments".
  std::string path(const std::string& prefix) const;
};

// Of the kinds watch follows, those a discovery document lists: `apps` is the answer to GET
// /apis/apps/v1 (a resource list; null or unreadable: Deployments alone, the kind every API
// serves), `argo` the answer to GET /apis/argoproj.io/v1alpha1 (null: 404, Argo Rollouts is not
// installed, and Rollouts are quietly not watched). Pure.
std::vector<WorkloadResource> served_kinds(const nlohmann::json& apps, const nlohmann::json& argo);

// Asks the API which of the kinds it serves (the two discovery GETs above). Throws Error when
// the API answers neither 200 nor 404.
std::vector<WorkloadResource> discover_kinds(const verify::ApiClient& client);

// The permissions watch needs in a namespace ("" = cluster-wide), as verify checks them: list
// and watch of each workload kind served, Services, Pods, EndpointSlices and Events; create of
// Events; and get, create, update of Leases when elected.
std::vector<verify::Permission> needed_permissions(const std::vector<WorkloadResource>& kinds,
                                                   bool leader_elect);

// "Deployments, StatefulSets, DaemonSets" for the log.
std::string kinds_text(const std::vector<WorkloadResource>& kinds);

}  // namespace zerodrop::watch
