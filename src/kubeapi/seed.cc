#include "kubeapi/seed.h"

#include <fmt/format.h>

#include "kubeapi/store.h"

namespace zerodrop::kubeapi {

using nlohmann::json;

namespace {

json complete_status(const std::string& rs, const std::string& at) {
  auto condition = [&](const char* type, const char* reason, const std::string& message) {
    return json{{"type", type},          {"status", "True"},           {"reason", reason},
                {"message", message},    {"lastUpdateTime", at},       {"lastTransitionTime", at}};
  };
  return {{"observedGeneration", 1},
          {"replicas", 0},
          {"updatedReplicas", 0},
          {"readyReplicas", 0},
          {"availableReplicas", 0},
          {"unavailableReplicas", 0},
          {"conditions",
           json::array({condition("Available", "MinimumReplicasAvailable",
                                  "Deployment has minimum availability."),
                        condition("Progressing", "NewReplicaSetAvailable",
                                  fmt::format("ReplicaSet \"{}\" has successfully progressed.",
                                              rs))})}};
}

}  // namespace

void seed_deployments(Store& store, const ClusterInfo& info, int count) {
  for (int i = 1; i <= count; ++i) {
    ClusterInfo one = info;
    one.deployment = fmt::format("seed-{:04}", i);
    one.replicas = 0;
    one.min_available = 0;
    json d = deployment_object(one);
    d["metadata"]["annotations"].erase(kWorkload);  // no workload of the lab runs it
    json rs = replica_set_object(one, d, 1, record::Micros(0));
    d["status"] = complete_status(rs["metadata"]["name"], rfc3339(one.start_wall));
    json service = service_object(one);
    service["metadata"]["annotations"].erase("zerodrop.dev/node-routers");
    service["spec"]["clusterIP"] = "None";  // headless: no router, no pod behind it
    service["spec"]["clusterIPs"] = {"None"};
    store.put("apps/deployments", d);
    store.put("apps/replicasets", rs);
    store.put("services", service);
  }
}

}  // namespace zerodrop::kubeapi
