#include "kubeapi/projection.h"

#include <signal.h>

#include <gtest/gtest.h>

namespace zerodrop::kubeapi {
namespace {

using nlohmann::json;
using record::EventKind;
using std::chrono::seconds;

ClusterInfo info() {
  ClusterInfo i;
  i.replicas = 1;
  i.min_available = 0;
  i.grace = seconds(30);
  i.port = 8080;
  i.nodes = {{"node-1", "127.0.0.1", 1000}, {"node-2", "127.0.0.1", 1001}};
  // 2026-12-01T00:00:00Z
  i.start_wall = std::chrono::system_clock::time_point(seconds(1796083200));
  return i;
}

record::Event event(double t, EventKind kind, const std::string& pod, std::string detail = {}) {
  record::Event e;
  e.t = std::chrono::duration_cast<record::Micros>(std::chrono::duration<double>(t));
  e.kind = kind;
  e.pod = pod;
  e.detail = std::move(detail);
  return e;
}

record::Event endpoint(double t, const std::string& pod, record::Conditions c) {
  record::Event e = event(t, EventKind::endpoint_changed, pod, "127.20.0.3:8080");
  e.conditions = c;
  return e;
}

class ProjectionTest : public ::testing::Test {
protected:
  void SetUp() override {
    projection.publish_initial();
    projection.observe(event(0.1, EventKind::pod_created, "pod-1", "127.20.0.3:8080 revision 1"));
    projection.observe(event(0.2, EventKind::pod_started, "pod-1", "pid 42"));
    projection.observe(endpoint(0.2, "pod-1", {false, false, false}));
    projection.observe(event(1.5, EventKind::pod_ready, "pod-1"));
    projection.observe(endpoint(1.5, "pod-1", {true, true, false}));
  }

  json pod() { return *store.get(Projection::kPods, "pod-1"); }

  json deployment() { return *store.get(Projection::kDeployments, "web"); }

  Store store;
  Projection projection{store, info()};
};

TEST_F(ProjectionTest, PodShowsKubeletsViewWithWallClockTimes) {
  json p = pod();
  EXPECT_EQ(p["status"]["phase"], "Running");
  EXPECT_EQ(p["status"]["podIP"], "127.20.0.3");
  EXPECT_EQ(p["spec"]["nodeName"], "node-1");
  EXPECT_EQ(p["metadata"]["creationTimestamp"], "2026-12-01T00:00:00Z");
  EXPECT_EQ(p["status"]["conditions"][3]["type"], "Ready");
  EXPECT_EQ(p["status"]["conditions"][3]["status"], "True");
  EXPECT_EQ(p["status"]["conditions"][3]["lastTransitionTime"], "2026-12-01T00:00:01Z");
  EXPECT_EQ(p["metadata"]["labels"]["app"], "web");
}

TEST_F(ProjectionTest, DeletionTimestampIsDeletionPlusGraceAndExitIsRecorded) {
  projection.observe(event(10.2, EventKind::deletion_started, "pod-1", "grace period 30s"));
  json p = pod();
  EXPECT_EQ(p["metadata"]["deletionTimestamp"], "2026-12-01T00:00:40Z");
  EXPECT_EQ(p["metadata"]["deletionGracePeriodSeconds"], 30);
  record::Event exit = event(12, EventKind::pod_exited, "pod-1");
  exit.signal = SIGKILL;
  projection.observe(exit);
  json c = pod()["status"]["containerStatuses"][0];
  EXPECT_EQ(c["state"]["terminated"]["exitCode"], 137);
  EXPECT_EQ(c["state"]["terminated"]["signal"], SIGKILL);
  EXPECT_EQ(pod()["status"]["phase"], "Failed");
  // The pod object goes when its endpoint does.
  projection.observe(event(12, EventKind::endpoint_changed, "pod-1", "removed"));
  EXPECT_FALSE(store.get(Projection::kPods, "pod-1"));
  EXPECT_TRUE(store.list(Projection::kSlices).items.empty());
}

TEST_F(ProjectionTest, SliceCarriesTheEndpointControllersConditions) {
  auto slices = store.list(Projection::kSlices).items;
  ASSERT_EQ(slices.size(), 1u);
  json e = slices[0]["endpoints"][0];
  EXPECT_EQ(e["conditions"]["ready"], true);
  EXPECT_EQ(e["targetRef"]["name"], "pod-1");
  EXPECT_EQ(slices[0]["metadata"]["labels"]["kubernetes.io/service-name"], "web");
  projection.observe(endpoint(3, "pod-1", {false, true, true}));
  e = store.list(Projection::kSlices).items[0]["endpoints"][0];
  EXPECT_EQ(e["conditions"]["ready"], false);
  EXPECT_EQ(e["conditions"]["serving"], true);
  EXPECT_EQ(e["conditions"]["terminating"], true);
}

TEST_F(ProjectionTest, LabRestartBumpsGenerationAndStatusFollowsTheNewRevision) {
  json d = deployment();
  EXPECT_EQ(d["status"]["observedGeneration"], 1);
  EXPECT_EQ(d["status"]["updatedReplicas"], 1);
  EXPECT_EQ(d["status"]["availableReplicas"], 1);
  projection.observe(event(5, EventKind::rollout_started, "",
                           "rollout restart to revision 2: maxSurge 1, maxUnavailable 0"));
  d = deployment();
  EXPECT_EQ(d["metadata"]["generation"], 2);
  EXPECT_EQ(d["status"]["observedGeneration"], 2);
  EXPECT_EQ(d["status"]["updatedReplicas"], 0);
  EXPECT_TRUE(d["spec"]["template"]["metadata"]["annotations"].contains(
      "kubectl.kubernetes.io/restartedAt"));
  EXPECT_EQ(store.list(Projection::kReplicaSets).items.size(), 2u);
  projection.observe(event(5.1, EventKind::pod_created, "pod-2", "127.20.0.4:8080 revision 2"));
  EXPECT_EQ(deployment()["status"]["updatedReplicas"], 1);
  EXPECT_EQ(deployment()["status"]["replicas"], 2);
  EXPECT_EQ((*store.get(Projection::kPods, "pod-2"))["spec"]["nodeName"], "node-2");
}

TEST_F(ProjectionTest, ApiPatchIsNotCountedTwice) {
  // The API's PATCH bumped the generation before the lab acted on it.
  store.update(Projection::kDeployments, "web", [](json& d) {
    d["metadata"]["generation"] = 2;
    return true;
  });
  EXPECT_EQ(deployment()["status"]["observedGeneration"], 1);
  projection.observe(event(5, EventKind::rollout_started, "", "rollout restart to revision 2: x"));
  EXPECT_EQ(deployment()["metadata"]["generation"], 2);
  EXPECT_EQ(deployment()["status"]["observedGeneration"], 2);
}

TEST_F(ProjectionTest, RepeatedProbeFailuresAggregateIntoOneEvent) {
  projection.observe(event(6, EventKind::probe_failed, "pod-1", "readiness: connection refused"));
  projection.observe(event(7, EventKind::probe_failed, "pod-1", "readiness: connection refused"));
  int unhealthy = 0;
  for (const json& e : store.list(Projection::kEvents).items) {
    if (e["reason"] == "Unhealthy") {
      ++unhealthy;
      EXPECT_EQ(e["count"], 2);
      EXPECT_EQ(e["message"], "Readiness probe failed: connection refused");
      EXPECT_EQ(e["lastTimestamp"], "2026-12-01T00:00:07Z");
    }
  }
  EXPECT_EQ(unhealthy, 1);
}

TEST(ProjectionOfSeveral, TwoWorkloadsShareOneStoreWithoutSharingAName) {
  Store store;
  ClusterInfo grpc = info();
  grpc.deployment = "grpc";
  grpc.pod_prefix = "grpc-";
  ClusterInfo web = info();
  web.deployment = "web";
  web.pod_prefix = "web-";
  web.start_wall += seconds(1);  // started a moment later: its node objects are not stored again
  Projection a(store, grpc);
  Projection b(store, web);
  a.publish_initial();
  uint64_t rv = store.resource_version();
  b.publish_initial();
  EXPECT_EQ(store.list("nodes").items.size(), 2u);
  EXPECT_EQ((*store.get("nodes", "node-1"))["metadata"]["uid"],
            uid_of("Node", "node-1", grpc.start_wall));
  EXPECT_GT(store.resource_version(), rv);  // its own Deployment, ReplicaSet and Service
  a.observe(event(0.1, EventKind::pod_created, "pod-1", "127.20.0.3:8080 revision 1"));
  b.observe(event(0.1, EventKind::pod_created, "pod-1", "127.20.0.4:8081 revision 1"));
  json g = *store.get(Projection::kPods, "grpc-pod-1");
  json w = *store.get(Projection::kPods, "web-pod-1");
  EXPECT_EQ(g["metadata"]["labels"]["app"], "grpc");
  EXPECT_EQ(w["metadata"]["labels"]["app"], "web");
  EXPECT_EQ(w["status"]["podIP"], "127.20.0.4");
  EXPECT_FALSE(store.get(Projection::kPods, "pod-1"));
  EXPECT_EQ(store.list(Projection::kDeployments).items.size(), 2u);
  EXPECT_EQ(store.list("services").items.size(), 2u);
}

}  // namespace
}  // namespace zerodrop::kubeapi
