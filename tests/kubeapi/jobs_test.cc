#include "kubeapi/jobs.h"

#include <map>

#include <gtest/gtest.h>

namespace zerodrop::kubeapi {
namespace {

using nlohmann::json;

std::vector<Node> three_nodes() {
  return {
      {"node-1", "127.0.0.1", 1001}, {"node-2", "127.0.0.1", 1002}, {"node-3", "127.0.0.1", 1003}};
}

json running_on(const std::string& node, const std::string& run) {
  return {{"metadata", {{"labels", {{"zerodrop.dev/run", run}, {"job-name", "agents"}}}}},
          {"spec", {{"nodeName", node}}},
          {"status", {{"phase", "Running"}}}};
}

json anti_affinity(const std::string& run) {
  json spec;
  spec["affinity"]["podAntiAffinity"]["requiredDuringSchedulingIgnoredDuringExecution"] =
      json::array({{{"labelSelector", {{"matchLabels", {{"zerodrop.dev/run", run}}}}},
                    {"topologyKey", "kubernetes.io/hostname"}}});
  return spec;
}

TEST(Schedule, AntiAffinityPutsOnePodPerNodeThenNone) {
  json labels = {{"zerodrop.dev/run", "r1"}, {"job-name", "agents"}};
  std::vector<json> pods;
  for (const char* expected : {"node-1", "node-2", "node-3"}) {
    Placement p = schedule(anti_affinity("r1"), labels, three_nodes(), pods);
    ASSERT_TRUE(p.node) << p.why_not;
    EXPECT_EQ(*p.node, expected);
    pods.push_back(running_on(*p.node, "r1"));
  }
  Placement full = schedule(anti_affinity("r1"), labels, three_nodes(), pods);
  EXPECT_FALSE(full.node);
  EXPECT_NE(full.why_not.find("3 node(s) didn't match pod anti-affinity"), std::string::npos);
  // Another run's pods do not repel, and a finished pod holds no node.
  EXPECT_TRUE(schedule(anti_affinity("r2"), labels, three_nodes(), pods).node);
  pods[1]["status"]["phase"] = "Succeeded";
  EXPECT_EQ(schedule(anti_affinity("r1"), labels, three_nodes(), pods).node, "node-2");
}

TEST(Schedule, NodeNameAndNodeSelectorChooseTheNode) {
  json labels = {{"job-name", "agents"}};
  EXPECT_EQ(schedule({{"nodeName", "node-3"}}, labels, three_nodes(), {}).node, "node-3");
  Placement missing = schedule({{"nodeName", "node-9"}}, labels, three_nodes(), {});
  EXPECT_FALSE(missing.node);
  EXPECT_EQ(missing.why_not, "node \"node-9\" not found");
  json by_label = {{"nodeSelector", {{"kubernetes.io/hostname", "node-2"}}}};
  EXPECT_EQ(schedule(by_label, labels, three_nodes(), {}).node, "node-2");
  // Without constraints the pods of a Job spread: the node with the fewest of them.
  EXPECT_EQ(schedule(json::object(), labels, three_nodes(), {running_on("node-1", "r")}).node,
            "node-2");
}

TEST(JobPodEnv, ServiceLinksNameTheNodesRouterAndDownwardApiFieldsResolve) {
  json service = json::parse(R"({"metadata": {"name": "my-web", "annotations":
      {"zerodrop.dev/node-routers": "node-1=127.0.0.1:1001,node-2=127.0.0.1:1002"}},
    "spec": {"clusterIP": "127.0.0.1", "ports": [{"port": 1001}]}})");
  json pod = json::parse(R"js({"metadata": {"name": "agents-1-x",
      "annotations": {"batch.kubernetes.io/job-completion-index": "1"}},
    "spec": {"nodeName": "node-2", "containers": [{"env": [
      {"name": "NODE_NAME", "valueFrom": {"fieldRef": {"fieldPath": "spec.nodeName"}}},
      {"name": "TARGET", "value": "$(MY_WEB_SERVICE_HOST):$(MY_WEB_SERVICE_PORT)"}]}]}})js");
  auto env = job_pod_env(pod, {service}, three_nodes()[1]);
  auto get = [&](const std::string& name) {
    for (const auto& [k, v] : env) {
      if (k == name) {
        return v;
      }
    }
    return std::string("<unset>");
  };
  EXPECT_EQ(get("MY_WEB_SERVICE_PORT"), "1002");
  EXPECT_EQ(get("JOB_COMPLETION_INDEX"), "1");
  EXPECT_EQ(get("NODE_NAME"), "node-2");
  EXPECT_EQ(get("TARGET"), "127.0.0.1:1002");
  json container = {{"command", {"/zerodrop"}},
                    {"args", {"--index", "$(JOB_COMPLETION_INDEX)", "$$(KEPT)", "$(UNSET)"}}};
  EXPECT_EQ(container_argv(container, env),
            (std::vector<std::string>{"/zerodrop", "--index", "1", "$(KEPT)", "$(UNSET)"}));
  EXPECT_THROW(container_argv(json::object(), env), std::exception);
  EXPECT_THROW(container_argv(json{{"command", {"/zerodrop", 7}}}, env), std::exception);
}

TEST(JobPodEnv, OnlyTheServicesOfThePodsNamespaceWithAnAddressAreLinked) {
  json grpc = json::parse(R"({"metadata": {"name": "grpc", "annotations":
      {"zerodrop.dev/node-routers": "node-1=127.0.0.1:1001,node-2=127.0.0.1:1002"}},
    "spec": {"clusterIP": "127.0.0.1", "ports": [{"name": "grpc", "port": 1001},
                                                 {"name": "metrics", "port": 9090}]}})");
  json elsewhere = json::parse(R"({"metadata": {"name": "far", "namespace": "other"},
    "spec": {"clusterIP": "10.0.0.9", "ports": [{"port": 80}]}})");
  json headless = json::parse(R"({"metadata": {"name": "bare"}})");
  json pod = json::parse(R"({"metadata": {"name": "agent-x"},
    "spec": {"nodeName": "node-2", "containers": [{"env": [{"name": "N", "value": 3}]}]}})");
  auto env = job_pod_env(pod, {grpc, elsewhere, headless}, three_nodes()[1]);
  std::map<std::string, std::string> vars(env.begin(), env.end());
  EXPECT_EQ(vars["GRPC_SERVICE_PORT_GRPC"], "1002");  // the node's router
  EXPECT_EQ(vars["GRPC_SERVICE_PORT_METRICS"], "9090");
  EXPECT_EQ(vars.count("FAR_SERVICE_HOST"), 0u);
  EXPECT_EQ(vars.count("BARE_SERVICE_HOST"), 0u);
  EXPECT_EQ(vars.count("N"), 0u);  // not a string: the API server would have refused it
}

TEST(JobStatus, IndexedCompletionCountsDistinctIndexes) {
  json job = {{"spec", {{"completionMode", "Indexed"}, {"completions", 3}}}};
  WallTime t0{};
  auto pod = [&](int index, std::optional<int> code) {
    JobPod p;
    p.index = index;
    p.started = t0;
    if (code) {
      p.finished = t0;
      p.exit_code = code;
    }
    return p;
  };
  json s = job_status(job, {pod(0, 0), pod(1, 1), pod(1, std::nullopt), pod(2, 0)}, std::nullopt,
                      t0, std::nullopt);
  EXPECT_EQ(s["active"], 1);
  EXPECT_EQ(s["succeeded"], 2);
  EXPECT_EQ(s["failed"], 1);
  EXPECT_EQ(s["completedIndexes"], "0,2");
  EXPECT_FALSE(s.contains("conditions"));
  json done = job_status(job, {pod(0, 0), pod(1, 0), pod(2, 0)}, std::nullopt, t0, t0);
  EXPECT_EQ(done["completedIndexes"], "0-2");
  EXPECT_EQ(done["conditions"][1]["type"], "Complete");
  json failed = job_status(job, {pod(0, 1)}, std::string("BackoffLimitExceeded"), t0, t0);
  EXPECT_EQ(failed["conditions"][1]["type"], "Failed");
  EXPECT_EQ(failed["conditions"][1]["reason"], "BackoffLimitExceeded");
}

TEST(AdmitJob, RefusesWhatTheApiServerRefuses) {
  ClusterInfo info;
  json ok = {
      {"metadata", {{"name", "j"}, {"uid", "u"}}},
      {"spec",
       {{"template",
         {{"spec", {{"restartPolicy", "Never"}, {"containers", {{{"command", {"true"}}}}}}}}}}}};
  json admitted = admit_job(ok, info, WallTime{});
  EXPECT_EQ(admitted["spec"]["completions"], 1);
  EXPECT_EQ(admitted["spec"]["completionMode"], "NonIndexed");
  json always = ok;
  always["spec"]["template"]["spec"]["restartPolicy"] = "Always";
  EXPECT_THROW(admit_job(always, info, WallTime{}), std::exception);
  json indexed = ok;
  indexed["spec"]["completionMode"] = "Indexed";
  EXPECT_THROW(admit_job(indexed, info, WallTime{}), std::exception);  // needs completions
  json no_command = ok;
  no_command["spec"]["template"]["spec"]["containers"][0].erase("command");
  EXPECT_THROW(admit_job(no_command, info, WallTime{}), std::exception);
}

}  // namespace
}  // namespace zerodrop::kubeapi
