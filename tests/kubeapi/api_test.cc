#include "kubeapi/api.h"

#include <gtest/gtest.h>

#include "kubeapi/projection.h"

namespace zerodrop::kubeapi {
namespace {

using nlohmann::json;

class ApiTest : public ::testing::Test {
protected:
  ApiTest() : api(store, cluster(), options(), hooks()) { projection.publish_initial(); }

  static ClusterInfo cluster() {
    ClusterInfo i;
    i.replicas = 2;
    i.nodes = {{"node-1", "127.0.0.1", 1000}};
    return i;
  }

  static ApiOptions options() {
    ApiOptions o;
    o.token = "secret";
    o.deny = {"patch/deployments"};
    return o;
  }

  LabHooks hooks() {
    LabHooks h;
    h.restart = [this](const std::string& deployment) {
      ++restarts;
      return deployment == "web";
    };
    h.scale = [this](const std::string& deployment, int n) {
      scaled_to = n;
      return deployment == "web";
    };
    h.delete_pod = [this](const std::string& pod) {
      deleted = pod;
    };
    h.create_job = [this](const std::string& job) {
      created_job = job;
    };
    h.delete_job = [this](const std::string& job, const std::string& policy) {
      deleted_job = job + " " + policy;
    };
    return h;
  }

  HttpResponse call(const std::string& method, const std::string& target,
                    const std::string& body = "", const std::string& type = "") {
    Reply r = api.handle({method, target, body, "Bearer secret", type});
    EXPECT_TRUE(std::holds_alternative<HttpResponse>(r)) << target;
    return std::get<HttpResponse>(r);
  }

  json get_json(const std::string& target) { return json::parse(call("GET", target).body); }

  Store store;
  Projection projection{store, cluster()};
  int restarts = 0;
  int scaled_to = -1;
  std::string deleted;
  std::string created_job;
  std::string deleted_job;
  Api api;
};

TEST_F(ApiTest, EveryRequestNeedsTheToken) {
  for (const char* auth : {"", "Bearer wrong", "secret"}) {
    Reply r = api.handle({"GET", "/api/v1/namespaces/default/pods", "", auth, ""});
    ASSERT_TRUE(std::holds_alternative<HttpResponse>(r));
    EXPECT_EQ(std::get<HttpResponse>(r).status, 401) << auth;
  }
  EXPECT_EQ(call("GET", "/version").status, 200);
}

TEST_F(ApiTest, DiscoveryListsTheGroupsKubectlNeeds) {
  json groups = get_json("/apis");
  std::vector<std::string> names;
  for (const json& g : groups["groups"]) {
    names.push_back(g["name"]);
  }
  for (const char* g :
       {"apps", "discovery.k8s.io", "batch", "authorization.k8s.io", "events.k8s.io"}) {
    EXPECT_NE(std::find(names.begin(), names.end(), g), names.end()) << g;
  }
  json apps = get_json("/apis/apps/v1");
  EXPECT_EQ(apps["groupVersion"], "apps/v1");
  EXPECT_EQ(call("GET", "/apis/nope/v1").status, 404);
}

TEST_F(ApiTest, ListCarriesTheResourceVersionAndFiltersByNamespace) {
  json list = get_json("/apis/apps/v1/namespaces/default/deployments");
  EXPECT_EQ(list["kind"], "DeploymentList");
  EXPECT_EQ(list["metadata"]["resourceVersion"], std::to_string(store.resource_version()));
  ASSERT_EQ(list["items"].size(), 1u);
  EXPECT_FALSE(list["items"][0].contains("kind"));
  EXPECT_TRUE(get_json("/apis/apps/v1/namespaces/other/deployments")["items"].empty());
  EXPECT_EQ(call("GET", "/apis/apps/v1/namespaces/default/deployments/nope").status, 404);
}

TEST_F(ApiTest, WatchFromAResourceVersion) {
  Reply r = api.handle({"GET",
                        "/apis/apps/v1/namespaces/default/deployments?watch=true&resourceVersion=3"
                        "&allowWatchBookmarks=true&fieldSelector=metadata.name%3Dweb"
                        "&timeoutSeconds=5",
                        "", "Bearer secret", ""});
  ASSERT_TRUE(std::holds_alternative<WatchStream>(r));
  const WatchStream& w = std::get<WatchStream>(r);
  EXPECT_EQ(w.since, 3u);
  EXPECT_TRUE(w.bookmarks);
  EXPECT_EQ(w.timeout, std::chrono::seconds(5));
  EXPECT_TRUE(api.selected(w, *store.get(Projection::kDeployments, "web")));
  json gone = json::parse(api.expired_line(3, 90));
  EXPECT_EQ(gone["type"], "ERROR");
  EXPECT_EQ(gone["object"]["code"], 410);
  EXPECT_EQ(gone["object"]["reason"], "Expired");
}

TEST_F(ApiTest, RolloutRestartPatchBumpsGenerationAndAsksTheLab) {
  // Unlike the fixture's denied deployments patch, this Api allows it.
  Api open(store, cluster(), ApiOptions{"secret", {}, "", std::chrono::seconds(1)}, hooks());
  std::string patch =
      R"({"spec":{"template":{"metadata":{"annotations":{"kubectl.kubernetes.io/restartedAt":"2026-12-01T05:02:15Z"}}}}})";
  Reply r = open.handle(
      {"PATCH", "/apis/apps/v1/namespaces/default/deployments/web?fieldManager=kubectl-rollout",
       patch, "Bearer secret", "application/strategic-merge-patch+json"});
  const HttpResponse& res = std::get<HttpResponse>(r);
  ASSERT_EQ(res.status, 200) << res.body;
  EXPECT_EQ(restarts, 1);
  json d = *store.get(Projection::kDeployments, "web");
  EXPECT_EQ(d["metadata"]["generation"], 2);
  EXPECT_EQ(d["spec"]["template"]["metadata"]["annotations"]["kubectl.kubernetes.io/restartedAt"],
            "2026-12-01T05:02:15Z");
  // kubectl scale patches the scale subresource.
  Reply s =
      open.handle({"PATCH", "/apis/apps/v1/namespaces/default/deployments/web/scale",
                   R"({"spec":{"replicas":4}})", "Bearer secret", "application/merge-patch+json"});
  EXPECT_EQ(std::get<HttpResponse>(s).status, 200);
  EXPECT_EQ(scaled_to, 4);
  EXPECT_EQ(restarts, 1);
}

TEST_F(ApiTest, DeniedVerbIsForbiddenAndReviewedAsDenied) {
  EXPECT_EQ(call("PATCH", "/apis/apps/v1/namespaces/default/deployments/web", "{}",
                 "application/merge-patch+json")
                .status,
            403);
  EXPECT_EQ(restarts, 0);
  auto review = [&](const std::string& verb) {
    json body = {{"spec",
                  {{"resourceAttributes",
                    {{"verb", verb}, {"group", "apps"}, {"resource", "deployments"}}}}}};
    HttpResponse r = call("POST", "/apis/authorization.k8s.io/v1/selfsubjectaccessreviews",
                          body.dump(), "application/json");
    EXPECT_EQ(r.status, 201);
    return json::parse(r.body)["status"]["allowed"].get<bool>();
  };
  EXPECT_FALSE(review("patch"));
  EXPECT_TRUE(review("get"));
}

TEST_F(ApiTest, JobsAreAdmittedWithDefaultsAndDeletedWithTheirPolicy) {
  const std::string jobs = "/apis/batch/v1/namespaces/default/jobs";
  EXPECT_EQ(call("POST", jobs, R"({"metadata":{"name":"j"}})").status, 400);
  std::string job = R"({"metadata":{"name":"agents"},"spec":{"completionMode":"Indexed",
    "completions":3,"parallelism":3,"template":{"spec":{"restartPolicy":"Never",
    "containers":[{"name":"a","image":"x","command":["/zerodrop","verify-agent"]}]}}}})";
  HttpResponse created = call("POST", jobs, job, "application/json");
  ASSERT_EQ(created.status, 201) << created.body;
  EXPECT_EQ(created_job, "agents");
  json stored = get_json(jobs + "/agents");
  EXPECT_EQ(stored["spec"]["backoffLimit"], 6);
  std::string uid = stored["metadata"]["uid"];
  EXPECT_EQ(stored["spec"]["selector"]["matchLabels"]["batch.kubernetes.io/controller-uid"], uid);
  EXPECT_EQ(stored["spec"]["template"]["metadata"]["labels"]["job-name"], "agents");
  EXPECT_EQ(call("POST", jobs, job).status, 409);
  // The API's default for a Job is Orphan; kubectl sends Background in the body.
  EXPECT_EQ(call("DELETE", jobs + "/agents", R"({"propagationPolicy":"Background"})").status, 200);
  EXPECT_EQ(deleted_job, "agents Background");
  EXPECT_EQ(call("GET", jobs + "/agents").status, 404);
  ASSERT_EQ(call("POST", jobs, job).status, 201);
  EXPECT_EQ(call("DELETE", jobs + "/agents?propagationPolicy=Foreground").status, 200);
  EXPECT_EQ(deleted_job, "agents Foreground");
  json marked = get_json(jobs + "/agents");  // kept until the lab has removed its pods
  EXPECT_TRUE(marked["metadata"].contains("deletionTimestamp"));
  EXPECT_EQ(call("DELETE", jobs + "/agents?propagationPolicy=Sideways").status, 400);
}

TEST_F(ApiTest, LongListsArePagedFromOneSnapshot) {
  for (int i = 0; i < 5; ++i) {
    ASSERT_EQ(call("POST", "/api/v1/namespaces/default/configmaps",
                   json{{"metadata", {{"name", "cm-" + std::to_string(i)}}}}.dump())
                  .status,
              201);
  }
  json first = get_json("/api/v1/namespaces/default/configmaps?limit=2");
  ASSERT_EQ(first["items"].size(), 2u);
  EXPECT_EQ(first["metadata"]["remainingItemCount"], 3);
  std::string rv = first["metadata"]["resourceVersion"];
  // A change between the pages does not show: the pages are one list at one resourceVersion.
  call("POST", "/api/v1/namespaces/default/configmaps", R"({"metadata":{"name":"cm-9"}})");
  std::string token = first["metadata"]["continue"];
  json second = get_json("/api/v1/namespaces/default/configmaps?limit=2&continue=" + token);
  EXPECT_EQ(second["items"][0]["metadata"]["name"], "cm-2");
  EXPECT_EQ(second["metadata"]["resourceVersion"], rv);
  json third = get_json("/api/v1/namespaces/default/configmaps?limit=2&continue="
                        + second["metadata"]["continue"].get<std::string>());
  ASSERT_EQ(third["items"].size(), 1u);
  EXPECT_EQ(third["items"][0]["metadata"]["name"], "cm-4");
  EXPECT_FALSE(third["metadata"].contains("continue"));
  // A token is good once; an unknown one is 410 Expired, as for a compacted list.
  EXPECT_EQ(call("GET", "/api/v1/namespaces/default/configmaps?limit=2&continue=" + token).status,
            410);
  EXPECT_EQ(call("GET", "/api/v1/namespaces/default/configmaps?continue=bogus").status, 410);
  EXPECT_EQ(get_json("/api/v1/namespaces/default/configmaps?limit=500")["items"].size(), 6u);
}

TEST_F(ApiTest, StoredKindsAreKept) {
  HttpResponse created = call("POST", "/api/v1/namespaces/default/configmaps",
                              R"({"metadata":{"name":"anchor"},"data":{"phase":"warmup"}})");
  EXPECT_EQ(created.status, 201);
  EXPECT_EQ(
      call("POST", "/api/v1/namespaces/default/configmaps", R"({"metadata":{"name":"anchor"}})")
          .status,
      409);
  EXPECT_EQ(call("PATCH", "/api/v1/namespaces/default/configmaps/anchor",
                 R"({"data":{"phase":"go"}})", "application/merge-patch+json")
                .status,
            200);
  EXPECT_EQ(get_json("/api/v1/namespaces/default/configmaps/anchor")["data"]["phase"], "go");
  EXPECT_EQ(call("DELETE", "/api/v1/namespaces/default/configmaps/anchor").status, 200);
  EXPECT_EQ(call("GET", "/api/v1/namespaces/default/configmaps/anchor").status, 404);
}

TEST(ApplyPatch, StrategicMergeMergesContainersByName) {
  json d = {{"spec", {{"containers", {{{"name", "app"}, {"image", "a:1"}, {"args", {"x"}}}}}}}};
  json out = apply_patch(d, "application/strategic-merge-patch+json",
                         R"({"spec":{"containers":[{"name":"app","image":"a:2"}]}})");
  EXPECT_EQ(out["spec"]["containers"].size(), 1u);
  EXPECT_EQ(out["spec"]["containers"][0]["image"], "a:2");
  EXPECT_EQ(out["spec"]["containers"][0]["args"][0], "x");
  EXPECT_THROW(apply_patch(d, "text/plain", "{}"), std::exception);
  EXPECT_THROW(apply_patch(d, "application/merge-patch+json", "{"), std::exception);
}

}  // namespace
}  // namespace zerodrop::kubeapi
