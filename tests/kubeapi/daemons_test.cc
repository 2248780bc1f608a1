#include "kubeapi/daemons.h"

#include <gtest/gtest.h>

#include "kubeapi/api.h"

namespace zerodrop::kubeapi {
namespace {

using nlohmann::json;

json agents() {
  return json::parse(R"({"apiVersion": "apps/v1", "kind": "DaemonSet",
    "metadata": {"name": "agent", "namespace": "zd", "uid": "u-1"},
    "spec": {"selector": {"matchLabels": {"app": "agent"}},
      "template": {"metadata": {"labels": {"app": "agent"}},
        "spec": {"containers": [{"name": "agent", "image": "zerodrop:dev",
          "command": ["/zerodrop"], "args": ["verify-agent"]}]}}}})");
}

std::vector<Node> nodes_of_three() {
  return {{"node-1", "127.0.0.1", 1}, {"node-2", "127.0.0.1", 2}, {"node-3", "127.0.0.1", 3}};
}

TEST(AdmitDaemonSet, DefaultsAndRefusals) {
  json ds = admit_daemon_set(agents());
  EXPECT_EQ(ds["spec"]["updateStrategy"]["type"], "RollingUpdate");
  EXPECT_EQ(ds["spec"]["template"]["spec"]["restartPolicy"], "Always");
  EXPECT_EQ(ds["spec"]["template"]["spec"]["terminationGracePeriodSeconds"], 30);
  EXPECT_EQ(ds["metadata"]["generation"], 1);
  json bad = agents();
  bad["spec"]["selector"]["matchLabels"]["app"] = "other";
  EXPECT_THROW(admit_daemon_set(bad), std::exception);
  bad = agents();
  bad["spec"]["template"]["spec"]["containers"] = json::array();
  EXPECT_THROW(admit_daemon_set(bad), std::exception);
  bad = agents();
  bad["spec"]["template"]["spec"]["restartPolicy"] = "Never";
  EXPECT_THROW(admit_daemon_set(bad), std::exception);
  bad = agents();
  bad["spec"]["template"]["spec"]["containers"][0].erase("command");
  EXPECT_THROW(admit_daemon_set(bad), std::exception);
  bad = agents();
  bad["spec"] = "x";
  EXPECT_THROW(admit_daemon_set(bad), std::exception);
}

TEST(DaemonNodes, EveryNodeUnlessTheNodeSelectorSaysOtherwise) {
  json ds = admit_daemon_set(agents());
  EXPECT_EQ(daemon_nodes(ds, nodes_of_three()).size(), 3u);
  ds["spec"]["template"]["spec"]["nodeSelector"] = {{"kubernetes.io/hostname", "node-2"}};
  std::vector<Node> chosen = daemon_nodes(ds, nodes_of_three());
  ASSERT_EQ(chosen.size(), 1u);
  EXPECT_EQ(chosen[0].name, "node-2");
}

TEST(DaemonPodObject, RunningPodOnItsNodeOwnedByTheDaemonSet) {
  json ds = admit_daemon_set(agents());
  DaemonPod pod;
  pod.name = "agent-abcde";
  pod.node = "node-2";
  pod.hash = revision_hash(ds);
  pod.created = std::chrono::system_clock::now();
  json p = daemon_pod_object(ds, pod);
  EXPECT_EQ(p["status"]["phase"], "Pending");
  EXPECT_EQ(p["metadata"]["namespace"], "zd");
  pod.started = pod.created;
  pod.restarts = 1;
  pod.exited = pod.created;
  pod.exit_code = 3;
  p = daemon_pod_object(ds, pod);
  EXPECT_EQ(p["spec"]["nodeName"], "node-2");
  EXPECT_EQ(p["status"]["phase"], "Running");
  EXPECT_EQ(p["status"]["containerStatuses"][0]["ready"], true);
  EXPECT_EQ(p["status"]["containerStatuses"][0]["restartCount"], 1);
  EXPECT_EQ(p["status"]["containerStatuses"][0]["lastState"]["terminated"]["exitCode"], 3);
  EXPECT_EQ(p["metadata"]["labels"]["app"], "agent");
  EXPECT_EQ(p["metadata"]["labels"]["controller-revision-hash"], pod.hash);
  EXPECT_EQ(p["metadata"]["ownerReferences"][0]["kind"], "DaemonSet");
  EXPECT_EQ(p["metadata"]["ownerReferences"][0]["uid"], "u-1");

  json status = daemon_set_status(ds, {pod}, 3);
  EXPECT_EQ(status["desiredNumberScheduled"], 3);
  EXPECT_EQ(status["currentNumberScheduled"], 1);
  EXPECT_EQ(status["numberReady"], 1);
  EXPECT_EQ(status["updatedNumberScheduled"], 1);
  EXPECT_EQ(status["numberUnavailable"], 2);
  // A new template: the pod is of the old revision.
  json changed = ds;
  changed["spec"]["template"]["spec"]["containers"][0]["args"].push_back("--watcher");
  EXPECT_NE(revision_hash(changed), pod.hash);
  EXPECT_EQ(daemon_set_status(changed, {pod}, 3)["updatedNumberScheduled"], 0);
}

TEST(DaemonSetApi, CreatedCheckedAndItsGenerationCountsSpecChanges) {
  Store store;
  ClusterInfo info;
  Api api(store, info, {"t", {}, "", std::chrono::seconds(1)}, {});
  auto call = [&](const std::string& method, const std::string& target, const std::string& body,
                  const std::string& type = "application/merge-patch+json") {
    return std::get<HttpResponse>(api.handle({method, target, body, "Bearer t", type, ""}));
  };
  std::string url = "/apis/apps/v1/namespaces/zd/daemonsets";
  json body = agents();
  body["metadata"].erase("uid");
  EXPECT_EQ(call("POST", url, body.dump()).status, 201);
  json bad = body;
  bad["metadata"]["name"] = "bad";
  bad["spec"]["selector"]["matchLabels"]["app"] = "x";
  HttpResponse refused = call("POST", url, bad.dump());
  EXPECT_EQ(refused.status, 400);
  EXPECT_NE(refused.body.find("does not match"), std::string::npos);
  HttpResponse r = call("PATCH", url + "/agent", R"({"metadata":{"labels":{"a":"b"}}})");
  EXPECT_EQ(json::parse(r.body)["metadata"]["generation"], 1);
  r = call("PATCH", url + "/agent",
           R"({"spec":{"template":{"spec":{"containers":[{"name":"agent","args":["x"]}]}}}})",
           "application/strategic-merge-patch+json");
  json patched = json::parse(r.body);
  EXPECT_EQ(patched["metadata"]["generation"], 2);
  EXPECT_EQ(patched["spec"]["template"]["spec"]["containers"][0]["command"][0], "/zerodrop");
  EXPECT_EQ(call("PATCH", url + "/agent", R"({"spec":{"selector":null}})").status, 400);
}

}  // namespace
}  // namespace zerodrop::kubeapi
