// RolloutTracker: when a Deployment's rollout starts and ends, from its objects alone.
#include "watch/rollouts.h"

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

namespace zerodrop::watch {
namespace {

using Json = nlohmann::json;
using Source = RolloutTracker::Source;
using Type = RolloutChange::Type;

// A Deployment of 3 replicas at `generation`, its template annotated `restarted`, its status as
// the controller writes it: observed, updated, replicas and the Progressing reason.
Json deployment(int generation, const std::string& restarted, int observed, int updated,
                int replicas, const std::string& progressing) {
  return {{"metadata", {{"name", "web"}, {"namespace", "shop"}, {"generation", generation}}},
          {"spec",
           {{"replicas", 3},
            {"template",
             {{"metadata",
               {{"labels", {{"app", "web"}}},
                {"annotations", {{"kubectl.kubernetes.io/restartedAt", restarted}}}}}}}}},
          {"status",
           {{"observedGeneration", observed},
            {"updatedReplicas", updated},
            {"replicas", replicas},
            {"conditions",
             Json::array({{{"type", "Progressing"},
                           {"status", progressing == "ProgressDeadlineExceeded" ? "False" : "True"},
                           {"reason", progressing}}})}}}};
}

Json settled(int generation, const std::string& restarted) {
  return deployment(generation, restarted, generation, 3, 3, "NewReplicaSetAvailable");
}

TEST(RolloutTracker, ARestartStartsARolloutThatEndsWhenTheControllerReportsItComplete) {
  RolloutTracker t;
  EXPECT_TRUE(t.on_object(settled(1, "a"), Source::listed).empty());
  auto started = t.on_object(deployment(2, "b", 1, 3, 3, "NewReplicaSetAvailable"), Source::event);
  ASSERT_EQ(started.size(), 1u);
  EXPECT_EQ(started[0].type, Type::started);
  EXPECT_TRUE(started[0].whole);
  EXPECT_EQ(started[0].key.name, "web");
  EXPECT_EQ(started[0].key.namespace_name, "shop");
  EXPECT_EQ(started[0].before["metadata"]["generation"], 1);  // the object before the change
  EXPECT_TRUE(t.in_rollout(started[0].key));
  // Observed, but the new ReplicaSet is still coming up.
  EXPECT_TRUE(t.on_object(deployment(2, "b", 2, 1, 4, "ReplicaSetUpdated"), Source::event).empty());
  // NewReplicaSetAvailable with old pods still counted is not the end yet.
  EXPECT_TRUE(
      t.on_object(deployment(2, "b", 2, 3, 4, "NewReplicaSetAvailable"), Source::event).empty());
  auto ended = t.on_object(settled(2, "b"), Source::event);
  ASSERT_EQ(ended.size(), 1u);
  EXPECT_EQ(ended[0].type, Type::ended);
  EXPECT_EQ(ended[0].end, RolloutEnd::complete);
  EXPECT_FALSE(t.in_rollout(ended[0].key));
  EXPECT_TRUE(t.on_object(settled(2, "b"), Source::event).empty());
}

TEST(RolloutTracker, AScaleIsNoRollout) {
  RolloutTracker t;
  t.on_object(settled(1, "a"), Source::listed);
  Json scaled = settled(2, "a");
  scaled["spec"]["replicas"] = 5;
  EXPECT_TRUE(t.on_object(scaled, Source::event).empty());
}

TEST(RolloutTracker, ARolloutUnderWayWhenFirstListedIsPartial) {
  RolloutTracker t;
  auto started = t.on_object(deployment(4, "x", 4, 1, 4, "ReplicaSetUpdated"), Source::listed);
  ASSERT_EQ(started.size(), 1u);
  EXPECT_EQ(started[0].type, Type::started);
  EXPECT_FALSE(started[0].whole);
  auto ended = t.on_object(settled(4, "x"), Source::event);
  ASSERT_EQ(ended.size(), 1u);
  EXPECT_EQ(ended[0].end, RolloutEnd::complete);
}

TEST(RolloutTracker, ANewDeploymentIsNoRollout) {
  RolloutTracker t;
  // Listed while its first pods come up: its creation, not a rollout.
  EXPECT_TRUE(
      t.on_object(deployment(1, "a", 1, 1, 1, "ReplicaSetUpdated"), Source::listed).empty());
  t = RolloutTracker();
  EXPECT_TRUE(
      t.on_object(deployment(1, "a", 0, 0, 0, "NewReplicaSetCreated"), Source::event).empty());
  EXPECT_TRUE(t.on_object(settled(1, "a"), Source::event).empty());
}

TEST(RolloutTracker, FailedPausedSupersededAndDeletedEndTheRollout) {
  RolloutTracker t;
  t.on_object(settled(1, "a"), Source::listed);
  t.on_object(deployment(2, "b", 1, 3, 3, "NewReplicaSetAvailable"), Source::event);
  auto failed = t.on_object(deployment(2, "b", 2, 1, 4, "ProgressDeadlineExceeded"), Source::event);
  ASSERT_EQ(failed.size(), 1u);
  EXPECT_EQ(failed[0].end, RolloutEnd::failed);

  t.on_object(deployment(3, "c", 2, 1, 4, "ReplicaSetUpdated"), Source::event);
  Json paused = deployment(4, "c", 3, 1, 4, "ReplicaSetUpdated");
  paused["spec"]["paused"] = true;
  auto p = t.on_object(paused, Source::event);
  ASSERT_EQ(p.size(), 1u);
  EXPECT_EQ(p[0].end, RolloutEnd::paused);

  t.on_object(deployment(5, "d", 4, 1, 4, "ReplicaSetUpdated"), Source::event);
  auto again = t.on_object(deployment(6, "e", 5, 1, 4, "ReplicaSetUpdated"), Source::event);
  ASSERT_EQ(again.size(), 2u);
  EXPECT_EQ(again[0].type, Type::ended);
  EXPECT_EQ(again[0].end, RolloutEnd::superseded);
  EXPECT_EQ(again[1].type, Type::started);

  auto deleted = t.on_deleted(deployment(6, "e", 6, 1, 4, "ReplicaSetUpdated"));
  ASSERT_EQ(deleted.size(), 1u);
  EXPECT_EQ(deleted[0].end, RolloutEnd::deleted);
  EXPECT_EQ(t.workloads(), 0u);
}

TEST(RolloutTracker, StaleStatusOfTheOldGenerationDoesNotEndTheNewRollout) {
  RolloutTracker t;
  t.on_object(settled(1, "a"), Source::listed);
  t.on_object(deployment(2, "b", 1, 3, 3, "NewReplicaSetAvailable"), Source::event);
  // Still generation 1 observed: the complete status is the old rollout's.
  EXPECT_TRUE(
      t.on_object(deployment(2, "b", 1, 3, 3, "NewReplicaSetAvailable"), Source::event).empty());
  EXPECT_TRUE(t.in_rollout({"Deployment", "shop", "web"}));
}

TEST(RolloutTracker, ARelistSeesTheDeploymentsDeletedMeanwhile) {
  RolloutTracker t;
  t.on_object(settled(1, "a"), Source::listed);
  t.on_object(deployment(2, "b", 1, 3, 3, "NewReplicaSetAvailable"), Source::event);
  // A relist of another kind's informer says nothing of the Deployments.
  EXPECT_TRUE(t.on_relisted("StatefulSet", {}).empty());
  auto gone = t.on_relisted("Deployment", {});
  ASSERT_EQ(gone.size(), 1u);
  EXPECT_EQ(gone[0].end, RolloutEnd::deleted);
}

}  // namespace
}  // namespace zerodrop::watch
