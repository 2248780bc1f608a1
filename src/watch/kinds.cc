#include "watch/kinds.h"

#include <fmt/format.h>

#include "base/error.h"

namespace zerodrop::watch {

using Json = nlohmann::json;

namespace {

const std::vector<WorkloadResource> kApps = {{"Deployment", "apps", "v1", "deployments"},
                                             {"StatefulSet", "apps", "v1", "statefulsets"},
                                             {"DaemonSet", "apps", "v1", "daemonsets"}};
const WorkloadResource kArgo = {"Rollout", "argoproj.io", "v1alpha1", "rollouts"};

// Whether a discovery resource list names `resource` with the verbs list and watch.
bool lists(const Json& resource_list, const std::string& resource) {
  if (!resource_list.is_object() || !resource_list.contains("resources")
      || !resource_list["resources"].is_array()) {
    return false;
  }
  for (const Json& r : resource_list["resources"]) {
    if (r.is_object() && r.value("name", "") == resource) {
      Json verbs = r.value("verbs", Json::array());
      bool list = false, watch = false;
      for (const Json& v : verbs) {
        list = list || v == "list";
        watch = watch || v == "watch";
      }
      return list && watch;
    }
  }
  return false;
}

Json discovery(const verify::ApiClient& client, const std::string& path) {
  verify::ApiResponse r = client.get(path);
  if (r.status == 404) {
    return nullptr;
  }
  if (!r.ok()) {
    throw Error(fmt::format("the API server answered {} with {}: {}", path, r.status,
                            verify::error_text(r)));
  }
  return Json::parse(r.body, nullptr, false);
}

}  // namespace

std::string WorkloadResource::path(const std::string& prefix) const {
  return fmt::format("/apis/{}/{}{}/{}", group, version, prefix, resource);
}

std::vector<WorkloadResource> served_kinds(const Json& apps, const Json& argo) {
  std::vector<WorkloadResource> out;
  bool readable = apps.is_object() && apps.contains("resources");
  for (const WorkloadResource& k : kApps) {
    if (readable ? lists(apps, k.resource) : k.resource == "deployments") {
      out.push_back(k);
    }
  }
  if (lists(argo, kArgo.resource)) {
    out.push_back(kArgo);
  }
  return out;
}

std::vector<WorkloadResource> discover_kinds(const verify::ApiClient& client) {
  return served_kinds(discovery(client, "/apis/apps/v1"),
                      discovery(client, "/apis/argoproj.io/v1alpha1"));
}

std::vector<verify::Permission> needed_permissions(const std::vector<WorkloadResource>& kinds,
                                                   bool leader_elect) {
  std::vector<verify::Permission> p;
  for (const char* verb : {"list", "watch"}) {
    for (const WorkloadResource& k : kinds) {
      p.push_back({k.group, k.resource, verb});
    }
    p.push_back({"", "services", verb});
    p.push_back({"", "pods", verb});
    p.push_back({"discovery.k8s.io", "endpointslices", verb});
    p.push_back({"", "events", verb});
  }
  p.push_back({"", "events", "create"});
  if (leader_elect) {
    for (const char* verb : {"get", "create", "update"}) {
      p.push_back({"coordination.k8s.io", "leases", verb});
    }
  }
  return p;
}

std::string kinds_text(const std::vector<WorkloadResource>& kinds) {
  std::string out;
  for (const WorkloadResource& k : kinds) {
    out += fmt::format("{}{}s", out.empty() ? "" : ", ", k.kind);
  }
  return out;
}

}  // namespace zerodrop::watch
