// What clients write to the lab's API and get back as the API server answers: Leases with
// optimistic concurrency (leader election), Events in both group versions, generated names,
// and bad bodies refused with a Status.
#include <gtest/gtest.h>

#include "kubeapi/api.h"
#include "kubeapi/projection.h"
#include "kubeapi/seed.h"

namespace zerodrop::kubeapi {
namespace {

using nlohmann::json;

class WritesTest : public ::testing::Test {
protected:
  WritesTest() : api(store, cluster(), {"secret", {}, "", std::chrono::seconds(1)}, {}) {
    projection.publish_initial();
  }

  static ClusterInfo cluster() {
    ClusterInfo i;
    i.nodes = {{"node-1", "127.0.0.1", 1000}};
    return i;
  }

  HttpResponse call(const std::string& method, const std::string& target,
                    const std::string& body = "", const std::string& type = "",
                    const std::string& accept = "") {
    Reply r = api.handle({method, target, body, "Bearer secret", type, accept});
    EXPECT_TRUE(std::holds_alternative<HttpResponse>(r)) << target;
    return std::get<HttpResponse>(r);
  }

  json call_json(const std::string& method, const std::string& target,
                 const std::string& body = "", int status = 200) {
    HttpResponse r = call(method, target, body, "application/merge-patch+json");
    EXPECT_EQ(r.status, status) << method << " " << target << ": " << r.body;
    return json::parse(r.body);
  }

  Store store;
  Projection projection{store, cluster()};
  Api api;
};

constexpr const char* kLeases = "/apis/coordination.k8s.io/v1/namespaces/zd/leases";

json lease(const std::string& holder, const std::string& rv = "",
           const std::string& renewed = "2026-12-06T20:30:00.123456Z") {
  json l = {{"apiVersion", "coordination.k8s.io/v1"},
            {"kind", "Lease"},
            {"metadata", {{"name", "zerodrop-watch"}}},
            {"spec",
             {{"holderIdentity", holder},
              {"leaseDurationSeconds", 15},
              {"renewTime", renewed},
              {"leaseTransitions", 0}}}};
  if (!rv.empty()) {
    l["metadata"]["resourceVersion"] = rv;
  }
  return l;
}

TEST_F(WritesTest, LeaseIsTakenByOneAndAStaleUpdateConflicts) {
  json a = call_json("POST", kLeases, lease("a").dump(), 201);
  EXPECT_EQ(a["metadata"]["namespace"], "zd");
  EXPECT_EQ(a["spec"]["renewTime"], "2026-12-06T20:30:00.123456Z");  // kept as written
  // The second candidate's create loses: the Lease exists.
  json lost = call_json("POST", kLeases, lease("b").dump(), 409);
  EXPECT_EQ(lost["reason"], "AlreadyExists");

  std::string url = std::string(kLeases) + "/zerodrop-watch";
  std::string rv = a["metadata"]["resourceVersion"];
  json renewed = call_json("PUT", url, lease("a", rv, "2026-12-06T20:30:02.000001Z").dump());
  EXPECT_NE(renewed["metadata"]["resourceVersion"], rv);
  EXPECT_EQ(renewed["metadata"]["uid"], a["metadata"]["uid"]);
  // b read the Lease before a renewed it: its takeover carries the old resourceVersion.
  json stale = call_json("PUT", url, lease("b", rv).dump(), 409);
  EXPECT_EQ(stale["reason"], "Conflict");
  EXPECT_NE(stale["message"].get<std::string>().find("leases.coordination.k8s.io"),
            std::string::npos);
  EXPECT_EQ(call_json("GET", url)["spec"]["holderIdentity"], "a");
  // With the current one it takes over; a merge patch with a stale one conflicts as well.
  std::string now = renewed["metadata"]["resourceVersion"];
  EXPECT_EQ(call_json("PUT", url, lease("b", now).dump())["spec"]["holderIdentity"], "b");
  call_json("PATCH", url, json{{"metadata", {{"resourceVersion", now}}}}.dump(), 409);
  EXPECT_EQ(call_json("GET", url)["spec"]["holderIdentity"], "b");

  json list = call_json("GET", kLeases);
  EXPECT_EQ(list["kind"], "LeaseList");
  ASSERT_EQ(list["items"].size(), 1u);
  EXPECT_TRUE(call_json("GET", "/apis/coordination.k8s.io/v1/namespaces/other/leases")["items"]
                  .empty());
  call_json("PUT", std::string(kLeases) + "/nope", lease("a").dump(), 400);  // name mismatch
  call_json("PUT", std::string(kLeases) + "/zerodrop-watch", "{", 400);
  call_json("DELETE", url);
  call_json("GET", url, "", 404);
  call_json("PUT", url, lease("a").dump(), 404);
}

TEST_F(WritesTest, LeaseTableShowsItsHolder) {
  call_json("POST", kLeases, lease("pod-a").dump(), 201);
  HttpResponse r = call("GET", kLeases, "", "", "application/json;as=Table;v=v1;g=meta.k8s.io");
  json table = json::parse(r.body);
  ASSERT_EQ(table["rows"].size(), 1u);
  EXPECT_EQ(table["rows"][0]["cells"][0], "zerodrop-watch");
  EXPECT_EQ(table["rows"][0]["cells"][1], "pod-a");
}

TEST_F(WritesTest, EventsPostedInEitherVersionAreServedInBoth) {
  json core = {{"metadata", {{"generateName", "web."}}},
               {"involvedObject",
                {{"apiVersion", "apps/v1"}, {"kind", "Deployment"}, {"name", "web"}}},
               {"reason", "RolloutClean"},
               {"message", "0 of 3,390"},
               {"type", "Normal"},
               {"source", {{"component", "zerodrop-watch"}}},
               {"lastTimestamp", "2026-12-06T20:30:00Z"},
               {"count", 1}};
  json posted = call_json("POST", "/api/v1/namespaces/default/events", core.dump(), 201);
  std::string name = posted["metadata"]["name"];
  EXPECT_EQ(name.rfind("web.", 0), 0u);
  EXPECT_EQ(name.size(), 9u);  // generateName + five characters
  json v1 = call_json("GET", "/apis/events.k8s.io/v1/namespaces/default/events/" + name);
  EXPECT_EQ(v1["note"], "0 of 3,390");
  EXPECT_EQ(v1["regarding"]["kind"], "Deployment");
  EXPECT_EQ(v1["reportingController"], nullptr);

  json newer = {{"metadata", {{"name", "web.abc"}}},
                {"regarding", {{"kind", "Deployment"}, {"name", "web"}}},
                {"reason", "RolloutDroppedRequests"},
                {"note", "12 of 3,410"},
                {"type", "Warning"},
                {"eventTime", "2026-12-06T20:31:00.000001Z"},
                {"reportingController", "zerodrop.dev/watch"},
                {"reportingInstance", "w-1"},
                {"action", "Measured"}};
  call_json("POST", "/apis/events.k8s.io/v1/namespaces/default/events", newer.dump(), 201);
  json as_core = call_json("GET", "/api/v1/namespaces/default/events/web.abc");
  EXPECT_EQ(as_core["apiVersion"], "v1");
  EXPECT_EQ(as_core["message"], "12 of 3,410");
  EXPECT_EQ(as_core["involvedObject"]["name"], "web");
  EXPECT_EQ(as_core["reportingComponent"], "zerodrop.dev/watch");

  // client-go's recorder aggregates with a patch of count and lastTimestamp.
  call_json("PATCH", "/api/v1/namespaces/default/events/" + name,
            R"({"count":2,"lastTimestamp":"2026-12-06T20:32:00Z"})");
  EXPECT_EQ(call_json("GET", "/apis/events.k8s.io/v1/namespaces/default/events/" + name)
                ["deprecatedCount"],
            2);

  HttpResponse r = call("GET", "/api/v1/namespaces/default/events", "", "",
                        "application/json;as=Table;v=v1;g=meta.k8s.io");
  json table = json::parse(r.body);
  int ours = 0;
  for (const json& row : table["rows"]) {
    if (row["cells"][3] == "deployment/web") {
      ++ours;
      EXPECT_TRUE(row["cells"][2] == "RolloutClean" || row["cells"][2] == "RolloutDroppedRequests");
    }
  }
  EXPECT_EQ(ours, 2);
}

TEST_F(WritesTest, BadBodiesGetAStatusNamingWhatIsWrong) {
  json e = call_json("POST", "/api/v1/namespaces/default/configmaps", "[1]", 400);
  EXPECT_EQ(e["kind"], "Status");
  e = call_json("POST", "/api/v1/namespaces/default/configmaps", R"({"metadata":{}})", 400);
  EXPECT_NE(e["message"].get<std::string>().find("generateName"), std::string::npos);
  e = call_json("POST", "/api/v1/namespaces/default/configmaps", R"({"metadata":{"name":"A_b"}})",
                400);
  EXPECT_NE(e["message"].get<std::string>().find("RFC 1123"), std::string::npos);
  call_json("POST", "/api/v1/namespaces/default/configmaps",
            R"({"kind":"Secret","metadata":{"name":"a"}})", 400);
  call_json("POST", "/api/v1/namespaces/default/configmaps",
            R"({"metadata":{"name":"a","namespace":"other"}})", 400);
  call_json("POST", "/api/v1/namespaces/default/configmaps", R"({"metadata":"x"})", 400);
  call_json("POST", "/apis/nope.io/v1/namespaces/default/widgets", "{}", 404);
  call_json("POST", "/api/v1/namespaces/default/widgets", "{}", 404);
  // A ClusterRole has no namespace, whatever the body says.
  json role = call_json("POST", "/apis/rbac.authorization.k8s.io/v1/clusterroles",
                        R"({"metadata":{"name":"zerodrop-watch"},"rules":[]})", 201);
  EXPECT_FALSE(role["metadata"].contains("namespace"));
  // Each created object has its own uid, also when created again under the same name.
  json a = call_json("POST", "/api/v1/namespaces/default/configmaps",
                     R"({"metadata":{"name":"same"}})", 201);
  call_json("DELETE", "/api/v1/namespaces/default/configmaps/same");
  json b = call_json("POST", "/api/v1/namespaces/default/configmaps",
                     R"({"metadata":{"name":"same"}})", 201);
  EXPECT_NE(a["metadata"]["uid"], b["metadata"]["uid"]);
}

TEST_F(WritesTest, SeededAndClientDeploymentsAreStoredNotRun) {
  seed_deployments(store, cluster(), 3);
  json list = call_json("GET", "/apis/apps/v1/namespaces/default/deployments");
  ASSERT_EQ(list["items"].size(), 4u);  // web and seed-0001 … seed-0003
  EXPECT_EQ(list["items"][0]["metadata"]["name"], "seed-0001");
  EXPECT_EQ(list["items"][0]["status"]["conditions"][1]["reason"], "NewReplicaSetAvailable");
  EXPECT_EQ(call_json("GET", "/api/v1/namespaces/default/services/seed-0002")["spec"]["clusterIP"],
            "None");
  // A rollout restart of one no workload runs: observed at once (this Api has no hooks).
  json d = call_json("PATCH", "/apis/apps/v1/namespaces/default/deployments/seed-0001",
                     R"({"spec":{"template":{"metadata":{"annotations":{"r":"1"}}}}})");
  EXPECT_EQ(d["metadata"]["generation"], 2);
  EXPECT_EQ(d["status"]["observedGeneration"], 2);
  // The lab's own workload cannot be deleted; a seeded one can, its ReplicaSet collected after.
  call_json("DELETE", "/apis/apps/v1/namespaces/default/deployments/web", "", 405);
  call_json("DELETE", "/apis/apps/v1/namespaces/default/deployments/seed-0003");
  json created = call_json("POST", "/apis/apps/v1/namespaces/zd/deployments",
                           R"({"metadata":{"name":"zerodrop-watch"},"spec":{"replicas":2,
                               "selector":{"matchLabels":{"app":"w"}},
                               "template":{"metadata":{"labels":{"app":"w"}}}}})",
                           201);
  EXPECT_EQ(created["status"]["observedGeneration"], 1);
  EXPECT_FALSE(created["metadata"].value("annotations", json::object()).contains(kWorkload));
  call_json("POST", "/apis/apps/v1/namespaces/zd/deployments", R"({"metadata":{"name":"x"}})",
            400);
  json scale = call_json("GET", "/apis/apps/v1/namespaces/zd/deployments/zerodrop-watch/scale");
  EXPECT_EQ(scale["status"]["selector"], "app=w");
}

}  // namespace
}  // namespace zerodrop::kubeapi
