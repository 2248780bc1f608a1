// Rollouts of StatefulSets, DaemonSets and Argo Rollouts, from their objects alone (the tracker
// over kube::rollout_status), and which kinds a discovery answer makes watch follow.
#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include "watch/kinds.h"
#include "watch/rollouts.h"

namespace zerodrop::watch {
namespace {

using Json = nlohmann::json;
using Source = RolloutTracker::Source;
using Type = RolloutChange::Type;

Json meta(int generation) {
  return {{"name", "db"}, {"namespace", "shop"}, {"generation", generation}};
}

Json pod_template(const std::string& image) {
  return {{"metadata", {{"labels", {{"app", "db"}}}}},
          {"spec", {{"containers", Json::array({{{"name", "db"}, {"image", image}}})}}}};
}

// A StatefulSet of 3 replicas with `image`, RollingUpdate with `partition`, its status.
Json sts(int generation, const std::string& image, int observed, int ready, int updated,
         const std::string& current, const std::string& update, int partition = 0) {
  return {{"kind", "StatefulSet"},
          {"metadata", meta(generation)},
          {"spec",
           {{"replicas", 3},
            {"updateStrategy",
             {{"type", "RollingUpdate"}, {"rollingUpdate", {{"partition", partition}}}}},
            {"template", pod_template(image)}}},
          {"status",
           {{"observedGeneration", observed},
            {"replicas", 3},
            {"readyReplicas", ready},
            {"updatedReplicas", updated},
            {"currentRevision", current},
            {"updateRevision", update}}}};
}

TEST(StatefulSetRollout, StartsOnATemplateChangeAndCompletesWhenCurrentRevisionCatchesUp) {
  RolloutTracker t;
  EXPECT_TRUE(t.on_object(sts(1, "v1", 1, 3, 3, "db-a", "db-a"), Source::listed).empty());
  auto started = t.on_object(sts(2, "v2", 1, 3, 3, "db-a", "db-a"), Source::event);
  ASSERT_EQ(started.size(), 1u);
  EXPECT_EQ(started[0].type, Type::started);
  EXPECT_EQ(started[0].key.kind, "StatefulSet");
  EXPECT_EQ(started[0].key.text(), "sts/db in shop");
  // Observed: the controller replaces pods from the highest ordinal down.
  EXPECT_TRUE(t.on_object(sts(2, "v2", 2, 2, 1, "db-a", "db-b"), Source::event).empty());
  // Every pod updated and ready, but currentRevision not yet moved: not the end.
  EXPECT_TRUE(t.on_object(sts(2, "v2", 2, 3, 3, "db-a", "db-b"), Source::event).empty());
  auto ended = t.on_object(sts(2, "v2", 2, 3, 3, "db-b", "db-b"), Source::event);
  ASSERT_EQ(ended.size(), 1u);
  EXPECT_EQ(ended[0].type, Type::ended);
  EXPECT_EQ(ended[0].end, RolloutEnd::complete);
  EXPECT_NE(ended[0].reason.find("currentRevision == updateRevision"), std::string::npos);
}

TEST(StatefulSetRollout, APartitionEndsTheRolloutOnceThePodsAboveItAreUpdated) {
  RolloutTracker t;
  t.on_object(sts(1, "v1", 1, 3, 3, "db-a", "db-a", 2), Source::listed);
  auto started = t.on_object(sts(2, "v2", 1, 3, 3, "db-a", "db-a", 2), Source::event);
  ASSERT_EQ(started.size(), 1u);
  // One pod (ordinal 2) of 3 - partition 2 to update; not yet.
  EXPECT_TRUE(t.on_object(sts(2, "v2", 2, 2, 0, "db-a", "db-b", 2), Source::event).empty());
  auto ended = t.on_object(sts(2, "v2", 2, 3, 1, "db-a", "db-b", 2), Source::event);
  ASSERT_EQ(ended.size(), 1u);
  EXPECT_EQ(ended[0].end, RolloutEnd::complete);
  EXPECT_NE(ended[0].reason.find("partition 2"), std::string::npos) << ended[0].reason;
  // The next stage: the partition lowered to 0, the same template; the rest are updated.
  auto stage = t.on_object(sts(3, "v2", 2, 3, 1, "db-a", "db-b", 0), Source::event);
  ASSERT_EQ(stage.size(), 1u);
  EXPECT_EQ(stage[0].type, Type::started);
  EXPECT_NE(stage[0].reason.find("partition was lowered from 2 to 0"), std::string::npos);
  EXPECT_TRUE(t.on_object(sts(3, "v2", 3, 3, 2, "db-a", "db-b", 0), Source::event).empty());
  auto done = t.on_object(sts(3, "v2", 3, 3, 3, "db-b", "db-b", 0), Source::event);
  ASSERT_EQ(done.size(), 1u);
  EXPECT_EQ(done[0].end, RolloutEnd::complete);
  // Raising the partition updates nothing: no rollout.
  EXPECT_TRUE(t.on_object(sts(4, "v2", 3, 3, 3, "db-b", "db-b", 1), Source::event).empty());
}

TEST(StatefulSetRollout, OnDeleteIsSkippedAndAFirstSeenRollingOneIsPartial) {
  RolloutTracker t;
  Json before = sts(1, "v1", 1, 3, 3, "db-a", "db-a");
  before["spec"]["updateStrategy"] = {{"type", "OnDelete"}};
  t.on_object(before, Source::listed);
  Json after = sts(2, "v2", 1, 3, 3, "db-a", "db-a");
  after["spec"]["updateStrategy"] = {{"type", "OnDelete"}};
  auto skipped = t.on_object(after, Source::event);
  ASSERT_EQ(skipped.size(), 1u);
  EXPECT_EQ(skipped[0].type, Type::skipped);
  EXPECT_NE(skipped[0].reason.find("OnDelete"), std::string::npos);
  EXPECT_FALSE(t.in_rollout(skipped[0].key));

  RolloutTracker u;
  auto partial = u.on_object(sts(5, "v5", 5, 3, 1, "db-a", "db-b"), Source::listed);
  ASSERT_EQ(partial.size(), 1u);
  EXPECT_FALSE(partial[0].whole);
}

TEST(StatefulSetRollout, ANewTemplateMidRolloutSupersedesIt) {
  RolloutTracker t;
  t.on_object(sts(1, "v1", 1, 3, 3, "db-a", "db-a"), Source::listed);
  t.on_object(sts(2, "v2", 2, 2, 1, "db-a", "db-b"), Source::event);
  auto again = t.on_object(sts(3, "v3", 2, 2, 1, "db-a", "db-b"), Source::event);
  ASSERT_EQ(again.size(), 2u);
  EXPECT_EQ(again[0].end, RolloutEnd::superseded);
  EXPECT_EQ(again[1].type, Type::started);
  // The old generation's complete-looking status does not end the new rollout.
  EXPECT_TRUE(t.on_object(sts(3, "v3", 2, 3, 3, "db-b", "db-b"), Source::event).empty());
}

// A DaemonSet on 4 nodes with `image`, its status.
Json ds(int generation, const std::string& image, int observed, int updated, int available) {
  return {{"kind", "DaemonSet"},
          {"metadata", meta(generation)},
          {"spec",
           {{"updateStrategy", {{"type", "RollingUpdate"}}}, {"template", pod_template(image)}}},
          {"status",
           {{"observedGeneration", observed},
            {"desiredNumberScheduled", 4},
            {"currentNumberScheduled", 4},
            {"updatedNumberScheduled", updated},
            {"numberReady", available},
            {"numberAvailable", available}}}};
}

TEST(DaemonSetRollout, CompletesWhenEveryScheduledPodIsUpdatedAndAvailable) {
  RolloutTracker t;
  t.on_object(ds(1, "v1", 1, 4, 4), Source::listed);
  auto started = t.on_object(ds(2, "v2", 1, 4, 4), Source::event);
  ASSERT_EQ(started.size(), 1u);
  EXPECT_EQ(started[0].key.text(), "ds/db in shop");
  EXPECT_TRUE(t.on_object(ds(2, "v2", 2, 1, 3), Source::event).empty());
  // All updated, one not yet available.
  EXPECT_TRUE(t.on_object(ds(2, "v2", 2, 4, 3), Source::event).empty());
  auto ended = t.on_object(ds(2, "v2", 2, 4, 4), Source::event);
  ASSERT_EQ(ended.size(), 1u);
  EXPECT_EQ(ended[0].end, RolloutEnd::complete);
  // A scale-out of the cluster (more nodes) changes the status, not the template: no rollout.
  Json wider = ds(2, "v2", 2, 4, 4);
  wider["status"]["desiredNumberScheduled"] = 5;
  EXPECT_TRUE(t.on_object(wider, Source::event).empty());
}

TEST(DaemonSetRollout, SupersededAndOnDelete) {
  RolloutTracker t;
  t.on_object(ds(1, "v1", 1, 4, 4), Source::listed);
  t.on_object(ds(2, "v2", 2, 1, 3), Source::event);
  auto again = t.on_object(ds(3, "v3", 2, 1, 3), Source::event);
  ASSERT_EQ(again.size(), 2u);
  EXPECT_EQ(again[0].end, RolloutEnd::superseded);
  Json manual = ds(4, "v4", 3, 4, 4);
  manual["spec"]["updateStrategy"] = {{"type", "OnDelete"}};
  auto changes = t.on_object(manual, Source::event);
  ASSERT_EQ(changes.size(), 2u);  // the rolling one superseded, the new change skipped
  EXPECT_EQ(changes[0].end, RolloutEnd::superseded);
  EXPECT_EQ(changes[1].type, Type::skipped);
}

// An Argo Rollout of 3 replicas; observedGeneration is a string, as Argo writes it.
Json rollout(int generation, const std::string& image, int observed, const std::string& phase,
             const std::string& current, const std::string& stable) {
  return {{"kind", "Rollout"},
          {"metadata", meta(generation)},
          {"spec",
           {{"replicas", 3},
            {"strategy",
             {{"canary",
               {{"steps", Json::array({{{"setWeight", 20}}, {{"pause", Json::object()}}})}}}}},
            {"template", pod_template(image)}}},
          {"status",
           {{"observedGeneration", std::to_string(observed)},
            {"phase", phase},
            {"currentPodHash", current},
            {"stableRS", stable}}}};
}

TEST(ArgoRollout, ACanaryRunsThroughItsPauseStepsAndCompletesWhenStableIsTheNewHash) {
  RolloutTracker t;
  t.on_object(rollout(1, "v1", 1, "Healthy", "aaa", "aaa"), Source::listed);
  auto started = t.on_object(rollout(2, "v2", 1, "Healthy", "aaa", "aaa"), Source::event);
  ASSERT_EQ(started.size(), 1u);
  EXPECT_EQ(started[0].key.text(), "rollout/db in shop");
  EXPECT_TRUE(t.on_object(rollout(2, "v2", 2, "Progressing", "bbb", "aaa"), Source::event).empty());
  // A pause step is part of the rollout, not its end.
  Json step = rollout(2, "v2", 2, "Paused", "bbb", "aaa");
  step["status"]["pauseConditions"] = Json::array({{{"reason", "CanaryPauseStep"}}});
  EXPECT_TRUE(t.on_object(step, Source::event).empty());
  // Healthy while stableRS still names the old hash: not yet.
  EXPECT_TRUE(t.on_object(rollout(2, "v2", 2, "Healthy", "bbb", "aaa"), Source::event).empty());
  auto ended = t.on_object(rollout(2, "v2", 2, "Healthy", "bbb", "bbb"), Source::event);
  ASSERT_EQ(ended.size(), 1u);
  EXPECT_EQ(ended[0].end, RolloutEnd::complete);
}

TEST(ArgoRollout, DegradedFailsPausedPausesARestartStarts) {
  RolloutTracker t;
  t.on_object(rollout(1, "v1", 1, "Healthy", "aaa", "aaa"), Source::listed);
  t.on_object(rollout(2, "v2", 2, "Progressing", "bbb", "aaa"), Source::event);
  Json degraded = rollout(2, "v2", 2, "Degraded", "bbb", "aaa");
  degraded["status"]["message"] = "RolloutAborted: metric error-rate failed";
  auto failed = t.on_object(degraded, Source::event);
  ASSERT_EQ(failed.size(), 1u);
  EXPECT_EQ(failed[0].end, RolloutEnd::failed);
  EXPECT_NE(failed[0].reason.find("RolloutAborted"), std::string::npos);

  // `kubectl argo rollouts restart` sets spec.restartAt: a rollout without a template change.
  Json restarted = rollout(2, "v2", 2, "Progressing", "bbb", "aaa");
  restarted["spec"]["restartAt"] = "2026-12-06T23:00:00Z";
  auto again = t.on_object(restarted, Source::event);
  ASSERT_EQ(again.size(), 1u);
  EXPECT_EQ(again[0].type, Type::started);
  Json paused = restarted;
  paused["spec"]["paused"] = true;
  auto p = t.on_object(paused, Source::event);
  ASSERT_EQ(p.size(), 1u);
  EXPECT_EQ(p[0].end, RolloutEnd::paused);
  EXPECT_EQ(api_version("Rollout"), "argoproj.io/v1alpha1");
}

TEST(WorkloadKinds, DiscoveryDecidesWhatIsWatchedAndAMissingArgoIsQuietlySkipped) {
  auto resource = [](const std::string& name) {
    return Json{{"name", name}, {"verbs", {"get", "list", "watch"}}};
  };
  Json apps = {{"resources", Json::array({resource("deployments"), resource("daemonsets"),
                                          resource("statefulsets"), resource("replicasets")})}};
  auto kinds = served_kinds(apps, nullptr);
  EXPECT_EQ(kinds_text(kinds), "Deployments, StatefulSets, DaemonSets");
  EXPECT_EQ(kinds[1].path("/namespaces/shop"), "/apis/apps/v1/namespaces/shop/statefulsets");
  // An API serving no StatefulSets (the lab's); Argo Rollouts installed.
  Json lab = {{"resources", Json::array({resource("deployments"), resource("daemonsets")})}};
  Json argo = {{"resources", Json::array({resource("rollouts"), resource("analysisruns")})}};
  kinds = served_kinds(lab, argo);
  EXPECT_EQ(kinds_text(kinds), "Deployments, DaemonSets, Rollouts");
  EXPECT_EQ(kinds.back().path(""), "/apis/argoproj.io/v1alpha1/rollouts");
  // Unreadable discovery: Deployments, which every API serves.
  EXPECT_EQ(kinds_text(served_kinds(Json("garbage"), nullptr)), "Deployments");

  bool rollouts_listed = false;
  for (const verify::Permission& p : needed_permissions(kinds, false)) {
    rollouts_listed = rollouts_listed || p.text() == "rollouts.argoproj.io list";
  }
  EXPECT_TRUE(rollouts_listed);
}

}  // namespace
}  // namespace zerodrop::watch
