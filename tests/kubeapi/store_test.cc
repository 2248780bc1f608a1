#include "kubeapi/store.h"

#include <gtest/gtest.h>

namespace zerodrop::kubeapi {
namespace {

using nlohmann::json;

json named(const std::string& name, int value = 0) {
  return {{"metadata", {{"name", name}}}, {"value", value}};
}

TEST(Store, PutStampsResourceVersionsAndKeepsUnchangedObjects) {
  Store store;
  json a = store.put("pods", named("a"));
  EXPECT_EQ(a["metadata"]["resourceVersion"], "1");
  // Equal content: no new version, no event.
  json again = store.put("pods", named("a"));
  EXPECT_EQ(again["metadata"]["resourceVersion"], "1");
  EXPECT_EQ(store.resource_version(), 1u);
  json changed = store.put("pods", named("a", 1));
  EXPECT_EQ(changed["metadata"]["resourceVersion"], "2");
}

TEST(Store, SinceReturnsOnlyLaterChangesOfThatResource) {
  Store store;
  store.put("pods", named("a"));      // rv 1
  store.put("services", named("s"));  // rv 2
  store.put("pods", named("a", 1));   // rv 3
  store.erase("pods", "a");           // rv 4
  auto events = store.since("pods", 1);
  ASSERT_TRUE(events);
  ASSERT_EQ(events->size(), 2u);
  EXPECT_EQ((*events)[0].type, "MODIFIED");
  EXPECT_EQ((*events)[0].rv, 3u);
  EXPECT_EQ((*events)[1].type, "DELETED");
  EXPECT_EQ((*events)[1].object["metadata"]["resourceVersion"], "4");
  EXPECT_EQ((*events)[1].object["value"], 1);  // the last state
  EXPECT_TRUE(store.since("pods", 4)->empty());
  EXPECT_FALSE(store.get("pods", "a"));
}

TEST(Store, TooOldResourceVersionIsGone) {
  Store store(3);  // keeps the last three changes
  for (int i = 0; i < 5; ++i) {
    store.put("pods", named("a", i));  // rv 1..5; 1 and 2 leave the history
  }
  EXPECT_FALSE(store.since("pods", 0));
  EXPECT_FALSE(store.since("pods", 1));
  // From rv 2 on, every later change (3, 4, 5) is still kept.
  auto from_two = store.since("pods", 2);
  ASSERT_TRUE(from_two);
  EXPECT_EQ(from_two->size(), 3u);
  EXPECT_EQ(store.since("pods", 4)->size(), 1u);
}

TEST(Store, UpdateAppliesAChangeOrNothing) {
  Store store;
  store.put("apps/deployments", named("web"));
  auto changed = store.update("apps/deployments", "web", [](json& d) {
    d["value"] = 7;
    return true;
  });
  ASSERT_TRUE(changed);
  EXPECT_EQ((*changed)["metadata"]["resourceVersion"], "2");
  EXPECT_FALSE(store.update("apps/deployments", "web", [](json&) { return false; }));
  EXPECT_FALSE(store.update("apps/deployments", "nope", [](json&) { return true; }));
  EXPECT_EQ(store.resource_version(), 2u);
}

TEST(Store, WaitReturnsAtOnceWhenAlreadyPastOrClosed) {
  Store store;
  store.put("pods", named("a"));
  auto far = std::chrono::steady_clock::now() + std::chrono::hours(1);
  EXPECT_EQ(store.wait_past(0, far), 1u);  // already past: no wait
  store.close();
  EXPECT_EQ(store.wait_past(1, far), 1u);  // closed: no wait either
  EXPECT_TRUE(store.closed());
}

}  // namespace
}  // namespace zerodrop::kubeapi
