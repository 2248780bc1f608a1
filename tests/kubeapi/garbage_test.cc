#include "kubeapi/garbage.h"

#include <vector>

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include "kubeapi/store.h"

namespace zerodrop::kubeapi {
namespace {

using nlohmann::json;

// The owners as a vector, not a json: `json x = {one}` is an array of one under g++ but a copy of
// `one` under clang (CWG 2137), so a braced single owner would not be a list with both.
json object(const std::string& name, const std::string& uid, std::vector<json> owners = {}) {
  json j = {{"metadata", {{"name", name}, {"uid", uid}}}};
  if (!owners.empty()) {
    j["metadata"]["ownerReferences"] = std::move(owners);
  }
  return j;
}

json owner(const std::string& kind, const std::string& api_version, const std::string& name,
           const std::string& uid) {
  return {{"apiVersion", api_version}, {"kind", kind}, {"name", name}, {"uid", uid}};
}

TEST(Garbage, DeletesDependentsOfAGoneOwnerAndTheirDependentsInTurn) {
  Store store;
  store.put("configmaps", object("anchor", "u-anchor"));
  store.put("batch/jobs", object("job", "u-job", {owner("ConfigMap", "v1", "anchor", "u-anchor")}));
  store.put("rbac/roles", object("role", "u-role", {owner("Job", "batch/v1", "job", "u-job")}));
  store.put("configmaps", object("mine", "u-mine"));  // no owner: never collected
  EXPECT_TRUE(collect_garbage(store).empty());        // every owner is there
  store.erase("configmaps", "anchor");
  std::vector<Collected> gone = collect_garbage(store);
  ASSERT_EQ(gone.size(), 2u);
  EXPECT_EQ(gone[0].resource, "batch/jobs");
  EXPECT_EQ(gone[0].owner, "configmap/anchor");
  EXPECT_EQ(gone[1].resource, "rbac/roles");
  EXPECT_FALSE(store.get("batch/jobs", "job"));
  EXPECT_FALSE(store.get("rbac/roles", "role"));
  EXPECT_TRUE(store.get("configmaps", "mine"));
}

TEST(Garbage, KeepsWhatAnyOwnerStillHoldsAndJudgesOwnersByUid) {
  Store store;
  store.put("configmaps", object("a", "u-a"));
  store.put("configmaps", object("b", "u-b"));
  store.put("configmaps",
            object("two", "u-2",
                   {owner("ConfigMap", "v1", "a", "u-a"), owner("ConfigMap", "v1", "b", "u-b")}));
  // Same name, another uid: a new object, not the owner.
  store.put("configmaps", object("stale", "u-s", {owner("ConfigMap", "v1", "b", "u-old")}));
  // A kind the lab does not serve: left, as the real collector leaves what it cannot resolve.
  store.put("configmaps", object("foreign", "u-f", {owner("Widget", "x.io/v1", "w", "u-w")}));
  store.erase("configmaps", "a");
  std::vector<Collected> gone = collect_garbage(store);
  ASSERT_EQ(gone.size(), 1u);
  EXPECT_EQ(gone[0].name, "stale");
  EXPECT_TRUE(store.get("configmaps", "two"));
  EXPECT_TRUE(store.get("configmaps", "foreign"));
}

}  // namespace
}  // namespace zerodrop::kubeapi
