#include "verify/observer.h"

#include <csignal>
#include <vector>

#include <gtest/gtest.h>

namespace zerodrop::verify {
namespace {

using nlohmann::json;
using record::EventKind;
using std::chrono::milliseconds;
using std::chrono::seconds;

json pod(const std::string& name, bool ready) {
  return {
      {"metadata", {{"name", name}}},
      {"spec", {{"nodeName", "n1"}}},
      {"status",
       {{"podIP", "10.0.0.7"},
        {"conditions", json::array({{{"type", "Ready"}, {"status", ready ? "True" : "False"}}})},
        {"containerStatuses", json::array({{{"name", "app"}, {"state", {{"running", {}}}}}})}}}};
}

json deleting(json p) {
  p["metadata"]["deletionTimestamp"] = "2026-12-01T12:00:30Z";
  p["metadata"]["deletionGracePeriodSeconds"] = 30;
  return p;
}

std::vector<EventKind> kinds(const std::vector<record::Event>& events) {
  std::vector<EventKind> out;
  for (const auto& e : events) {
    out.push_back(e.kind);
  }
  return out;
}

PodTemplate with_prestop(Duration d) {
  return {"app", d, d > Duration::zero()};
}

TEST(Observer, PodLifeBecomesEventsOnTheReceiptClock) {
  Observer o(with_prestop(seconds(5)));
  EXPECT_EQ(kinds(o.on_pod({WatchType::listed, pod("web-1", true)}, milliseconds(1))),
            (std::vector{EventKind::pod_created, EventKind::pod_ready}));
  EXPECT_TRUE(o.on_pod({WatchType::modified, pod("web-1", true)}, milliseconds(2)).empty());
  auto del = o.on_pod({WatchType::modified, deleting(pod("web-1", true))}, seconds(10));
  ASSERT_EQ(kinds(del), (std::vector{EventKind::deletion_started, EventKind::signal_sent}));
  EXPECT_EQ(del[0].t, seconds(10));
  EXPECT_EQ(del[1].t, seconds(15));  // inferred: deletion seen + preStop 5 s
  EXPECT_EQ(del[1].signal, SIGTERM);
  EXPECT_NE(del[1].detail.find("inferred"), std::string::npos);
  json dead = deleting(pod("web-1", false));
  dead["status"]["containerStatuses"][0]["state"] = {
      {"terminated", {{"exitCode", 137}, {"reason", "Error"}, {"finishedAt", "…"}}}};
  auto exit = o.on_pod({WatchType::modified, dead}, seconds(20));
  ASSERT_EQ(kinds(exit), (std::vector{EventKind::pod_unready, EventKind::pod_exited}));
  EXPECT_EQ(exit[1].signal, SIGKILL);
  EXPECT_FALSE(exit[1].exit_code);
  EXPECT_TRUE(o.on_pod({WatchType::deleted, dead}, seconds(21)).empty());
}

TEST(Observer, UnknownPreStopInfersNoSignalAndADeletedPodExits) {
  Observer o({"app", std::nullopt, true});
  o.on_pod({WatchType::added, pod("web-2", true)}, seconds(1));
  EXPECT_EQ(kinds(o.on_pod({WatchType::modified, deleting(pod("web-2", true))}, seconds(2))),
            (std::vector{EventKind::deletion_started}));
  auto gone = o.on_pod({WatchType::deleted, deleting(pod("web-2", true))}, seconds(3));
  ASSERT_EQ(kinds(gone), (std::vector{EventKind::pod_exited}));
  EXPECT_FALSE(gone[0].exit_code);
  EXPECT_FALSE(gone[0].signal);
}

// The endpoints as a vector, not a json: `json x = {one}` is an array of one under g++ but a copy
// of `one` under clang (CWG 2137), so a braced single endpoint would not be a list with both.
json slice(const std::string& name, std::vector<json> endpoints) {
  return {{"metadata", {{"name", name}}}, {"endpoints", std::move(endpoints)}};
}

json endpoint(const std::string& pod, json conditions) {
  return {{"addresses", {"10.0.0.1"}},
          {"conditions", std::move(conditions)},
          {"targetRef", {{"kind", "Pod"}, {"name", pod}}}};
}

TEST(Observer, EndpointSlicesAreOneSetOfPodsWithKepDefaults) {
  Observer o(with_prestop(seconds(0)));
  auto first =
      o.on_slice({WatchType::listed, slice("a", {endpoint("p1", json::object())})}, seconds(1));
  ASSERT_EQ(first.size(), 1u);
  EXPECT_EQ(*first[0].conditions, (record::Conditions{true, true, false}));  // nil = ready
  // p1 moves to another slice: no change for the Service.
  EXPECT_EQ(o.on_slice({WatchType::added, slice("b", {endpoint("p1", json::object())})}, seconds(2))
                .size(),
            0u);
  EXPECT_TRUE(o.on_slice({WatchType::modified, slice("a", {})}, seconds(3)).empty());
  auto term = o.on_slice(
      {WatchType::modified,
       slice("b", {endpoint("p1", {{"ready", false}, {"serving", true}, {"terminating", true}})})},
      seconds(4));
  ASSERT_EQ(term.size(), 1u);
  EXPECT_EQ(*term[0].conditions, (record::Conditions{false, true, true}));
  auto removed = o.on_slice({WatchType::deleted, slice("b", {})}, seconds(5));
  ASSERT_EQ(removed.size(), 1u);
  EXPECT_EQ(*removed[0].conditions, record::Conditions{});
  EXPECT_EQ(removed[0].pod, "p1");
}

json kube_event(const std::string& pod, const std::string& reason, const std::string& message) {
  return {{"involvedObject", {{"kind", "Pod"}, {"name", pod}}},
          {"reason", reason},
          {"message", message}};
}

TEST(Observer, KubeletEventsOfThisDeploymentsPodsOnly) {
  Observer o(with_prestop(seconds(3)));
  o.on_pod({WatchType::listed, pod("web-1", true)}, seconds(0));
  auto killing =
      o.on_event({WatchType::added, kube_event("web-1", "Killing", "Stopping")}, seconds(1));
  ASSERT_EQ(kinds(killing), (std::vector{EventKind::prestop_started}));
  auto probe = o.on_event(
      {WatchType::added, kube_event("web-1", "Unhealthy", "Readiness probe failed: 503")},
      seconds(2));
  ASSERT_EQ(probe.size(), 1u);
  EXPECT_EQ(probe[0].detail, "readiness: Readiness probe failed: 503");
  EXPECT_TRUE(
      o.on_event({WatchType::added, kube_event("other", "Killing", "x")}, seconds(3)).empty());
  EXPECT_TRUE(
      o.on_event({WatchType::listed, kube_event("web-1", "Killing", "old")}, seconds(3)).empty());
}

json deployment(int64_t generation, int64_t observed, int64_t updated, int64_t replicas) {
  return {{"metadata", {{"name", "web"}, {"generation", generation}}},
          {"spec", {{"replicas", 2}}},
          {"status",
           {{"observedGeneration", observed},
            {"replicas", replicas},
            {"updatedReplicas", updated},
            {"readyReplicas", replicas},
            {"availableReplicas", updated}}}};
}

TEST(Observer, CompleteOnlyWhenNoOldPodIsLeftAnywhere) {
  Observer o(with_prestop(seconds(0)));
  o.on_deployment({WatchType::listed, deployment(1, 1, 2, 2)}, seconds(0));
  o.on_pod({WatchType::listed, pod("old", true)}, seconds(0));
  o.on_slice({WatchType::listed, slice("s", {endpoint("old", json::object())})}, seconds(0));
  o.mark_old_pods();
  EXPECT_FALSE(o.rollout_complete());  // the same generation: nothing rolled out yet
  auto step = o.on_deployment({WatchType::modified, deployment(2, 2, 2, 2)}, seconds(1));
  EXPECT_EQ(kinds(step), (std::vector{EventKind::rollout_step}));
  EXPECT_FALSE(o.rollout_complete());  // the old pod still exists
  o.on_pod({WatchType::deleted, pod("old", false)}, seconds(2));
  EXPECT_FALSE(o.rollout_complete());  // … and is still in the slices
  EXPECT_EQ(o.old_pods_left(), 1u);
  o.on_slice({WatchType::modified, slice("s", {endpoint("new", json::object())})}, seconds(3));
  EXPECT_TRUE(o.rollout_complete());
}

record::Event ev(Micros t, EventKind kind, std::string pod) {
  record::Event e;
  e.t = t;
  e.kind = kind;
  e.pod = std::move(pod);
  return e;
}

record::RequestRecord failed(Micros t, record::Connection c) {
  record::RequestRecord r;
  r.intended = t;
  r.sent = t;
  r.failed = true;
  r.outcome = record::Outcome::reset_before_response;
  r.connection = c;
  return r;
}

TEST(AttributeToTerminating, OnlyTheOneTerminatingPodOfAFreshFailure) {
  std::vector<record::Event> events{ev(seconds(10), EventKind::deletion_started, "a"),
                                    ev(seconds(11), EventKind::pod_exited, "a"),
                                    ev(seconds(20), EventKind::deletion_started, "b"),
                                    ev(seconds(21), EventKind::deletion_started, "c")};
  std::vector<record::RequestRecord> requests{
      failed(seconds(5), record::Connection::fresh),    // nothing terminating
      failed(seconds(12), record::Connection::fresh),   // a, within the router lag
      failed(seconds(12), record::Connection::reused),  // reused: its pod is not inferred
      failed(seconds(15), record::Connection::fresh),   // a is long gone
      failed(seconds(22), record::Connection::fresh)};  // b and c: ambiguous
  EXPECT_EQ(attribute_to_terminating(events, requests), 1u);
  EXPECT_EQ(requests[0].backend, "");
  EXPECT_EQ(requests[1].backend, "a");
  EXPECT_EQ(requests[2].backend, "");
  EXPECT_EQ(requests[3].backend, "");
  EXPECT_EQ(requests[4].backend, "");
  EXPECT_EQ(requests[4].backend_candidates, (std::vector<std::string>{"b", "c"}));
  for (size_t i = 0; i < 4; ++i) {
    EXPECT_TRUE(requests[i].backend_candidates.empty()) << i;
  }
}

}  // namespace
}  // namespace zerodrop::verify
