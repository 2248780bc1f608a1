#include "diagnose/diagnose.h"

#include <gtest/gtest.h>

#include "base/error.h"
#include "diagnose/run_builder.h"

namespace zerodrop::diagnose {
namespace {

using record::Hole;
using testing::at;
using testing::Connection;
using testing::EventKind;
using testing::Outcome;
using testing::RunBuilder;

// Two pods serving through two routers since 0.5 s; a rollout starts at 2 s.
RunBuilder steady() {
  RunBuilder b;
  b.set("replicas", "2").set("prestop", "none").set("grace", "30s");
  b.serving({"web-0", "web-1"}, {"node-1", "node-2"});
  b.ok(1.0, 2.0, 0.1, "node-1", "web-0").ok(1.0, 2.0, 0.1, "node-2", "web-1");
  b.event(2.0, EventKind::rollout_started, "");
  return b;
}

// web-0 deleted at 4 s, no preStop, exits 10 ms after SIGTERM; node-1 updates at 5 s, node-2 at
// 6.02 s.
RunBuilder naive_termination() {
  RunBuilder b = steady();
  b.terminate("web-0", 4.0, 0.01);
  b.applied(5.0, "node-1", "web-0", false, true).applied(6.02, "node-2", "web-0", false, true);
  return b;
}

const HoleSummary* find(const Diagnosis& d, Hole hole) {
  for (const HoleSummary& h : d.holes) {
    if (h.hole == hole) {
      return &h;
    }
  }
  return nullptr;
}

TEST(Diagnose, PassesWithNoFailures) {
  Diagnosis d = diagnose(steady().build(), Options{});
  EXPECT_EQ(d.verdict, Verdict::pass);
  EXPECT_TRUE(d.holes.empty());
  EXPECT_TRUE(d.failures.empty());
  EXPECT_EQ(d.totals.requests, 20u);
  EXPECT_EQ(d.totals.ok, 20u);
  EXPECT_EQ(d.conclusion, "no request failed (20 requests)");
  EXPECT_NEAR(d.totals.p50_ms, 5.0, 0.01);
}

TEST(Diagnose, RefusalsBeforeRouterUpdateAreDeregistrationRace) {
  RunBuilder b = naive_termination();
  b.request(4.5, 4.5, Outcome::connect_refused, Connection::fresh, "node-1", "web-0");
  b.request(5.5, 5.5, Outcome::connect_refused, Connection::fresh, "node-2", "web-0");
  b.request(5.9, 5.9, Outcome::connect_refused, Connection::fresh, "node-2", "web-0");
  Diagnosis d = diagnose(b.build(), Options{});
  ASSERT_EQ(d.holes.size(), 1u);
  const HoleSummary& h = d.holes[0];
  EXPECT_EQ(h.hole, Hole::deregistration_race);
  EXPECT_EQ(h.requests, 3u);
  EXPECT_EQ(h.first, at(4.5));
  EXPECT_EQ(h.last, at(5.9));
  EXPECT_EQ(h.pods, std::vector<std::string>{"web-0"});
  EXPECT_EQ(h.routers, (std::vector<std::string>{"node-1", "node-2"}));
  EXPECT_EQ(h.evidence,
            "3 connections refused by pod web-0 between SIGTERM at 4.00 s and "
            "router node-2's update at 6.02 s");
  EXPECT_EQ(d.failures[0].backend_state, BackendState::exited);
  EXPECT_FALSE(d.failures[0].router_applied);
  EXPECT_EQ(d.verdict, Verdict::fail);
  EXPECT_TRUE(d.rollout_related);
}

TEST(Diagnose, PrestopAndGraceComeFromMeasuredPropagationAndDrain) {
  RunBuilder b = naive_termination();
  b.request(4.5, 4.5, Outcome::connect_refused, Connection::fresh, "node-1", "web-0");
  Diagnosis d = diagnose(b.build(), Options{});
  // Longest propagation 2.02 s + 1 s margin = 3.02 s -> 4 s; drain 10 ms (exit after SIGTERM):
  // grace >= 4 + 0.01 + 1 = 5.01 -> 6 s, but the current 30 s is kept.
  EXPECT_EQ(d.propagation.max, at(2.02));
  EXPECT_EQ(d.propagation.samples.size(), 2u);
  ASSERT_TRUE(d.longest_drain);
  EXPECT_EQ(*d.longest_drain, at(0.01));
  const Fix& fix = d.holes[0].fix;
  EXPECT_EQ(fix.summary, "preStop sleep 4 s, terminationGracePeriodSeconds 30");
  EXPECT_NE(fix.snippet.find("sleep:\n          seconds: 4"), std::string::npos) << fix.snippet;
  EXPECT_TRUE(fix.warning.empty());
  EXPECT_EQ(fix.why,
            "preStop ≥ longest observed propagation 2.02 s (of 2 router updates) + margin 1 s, "
            "rounded up to 4 s; terminationGracePeriodSeconds ≥ preStop 4 s + longest observed "
            "drain 10.0 ms (pod web-0 exited 10.0 ms after its stop signal) + margin 1 s = 6 s, "
            "rounded up; the current 30 s already covers it");
}

TEST(Diagnose, GraceIsComputedWhenTheCurrentOneIsShorter) {
  RunBuilder b = naive_termination();
  b.set("grace", "2s");
  b.request(4.5, 4.5, Outcome::connect_refused, Connection::fresh, "node-1", "web-0");
  Options options;
  options.margin = std::chrono::milliseconds(500);
  Diagnosis d = diagnose(b.build(), options);
  // 2.02 + 0.5 = 2.52 -> 3 s; 3 + 0.01 + 0.5 = 3.51 -> 4 s.
  EXPECT_EQ(d.holes[0].fix.summary, "preStop sleep 3 s, terminationGracePeriodSeconds 4");
}

TEST(Diagnose, OldKubernetesGetsExecPrestopWithDistrolessWarning) {
  RunBuilder b = naive_termination();
  b.request(4.5, 4.5, Outcome::connect_refused, Connection::fresh, "node-1", "web-0");
  Options options;
  options.k8s_version = "1.29";
  Diagnosis d = diagnose(b.build(), options);
  const Fix& fix = d.holes[0].fix;
  EXPECT_NE(fix.snippet.find("command: [\"sleep\", \"4\"]"), std::string::npos) << fix.snippet;
  EXPECT_NE(fix.warning.find("distroless"), std::string::npos);
}

TEST(Diagnose, MalformedKubernetesVersionIsAnError) {
  Options options;
  options.k8s_version = "one.thirty";
  EXPECT_THROW(diagnose(steady().build(), options), Error);
}

TEST(Diagnose, InFlightAtExitIsNoDrain) {
  RunBuilder b = naive_termination();
  b.request(3.995, 4.009, Outcome::reset_before_response, Connection::reused, "node-1", "web-0");
  b.request(4.5, 4.5, Outcome::connect_refused, Connection::fresh, "node-1", "web-0");
  Diagnosis d = diagnose(b.build(), Options{});
  ASSERT_EQ(d.holes.size(), 2u);
  const HoleSummary* h = find(d, Hole::no_drain);
  ASSERT_TRUE(h);
  EXPECT_EQ(h->requests, 1u);
  EXPECT_EQ(h->evidence,
            "1 request in flight at pod web-0 broke when it exited at 4.01 s (exit "
            "code 0), 10.0 ms after SIGTERM (reset_before_response 1)");
  EXPECT_EQ(h->fix.steps.size(), 4u);
  EXPECT_TRUE(find(d, Hole::deregistration_race));
}

TEST(Diagnose, RouterRefusalOnFreshConnectionIsDeregistrationRace) {
  // The l4 router turns a refused backend connect into a reset before any byte.
  RunBuilder b = naive_termination();
  b.request(4.5, 4.501, Outcome::reset_before_response, Connection::fresh, "node-1", "web-0");
  b.event(4.5005, EventKind::router_refused, "web-0", "node-1");
  Diagnosis d = diagnose(b.build(), Options{});
  ASSERT_EQ(d.failures.size(), 1u);
  EXPECT_EQ(d.failures[0].hole, Hole::deregistration_race);
}

TEST(Diagnose, RefusalJustAfterTheSignalCountsFromTheConnectNotTheSend) {
  // Sent 1 ms before SIGTERM, refused by the router's connect 2 ms later.
  RunBuilder b = naive_termination();
  b.request(3.999, 4.001, Outcome::reset_before_response, Connection::fresh, "node-1", "web-0");
  b.event(4.0005, EventKind::router_refused, "web-0", "node-1");
  Diagnosis d = diagnose(b.build(), Options{});
  ASSERT_EQ(d.failures.size(), 1u);
  EXPECT_EQ(d.failures[0].hole, Hole::deregistration_race);
  EXPECT_EQ(d.failures[0].reason, "refused by pod web-0 just after it stopped at 4.00 s");
}

TEST(Diagnose, RefusalOfARequestSentBetweenDeletionAndSignalIsDeregistrationRace) {
  // No preStop: the kubelet records the deletion, then the signal; under load the two stamps are
  // milliseconds apart. A connection sent in between is refused once the signal has landed.
  RunBuilder b = steady();
  b.event(4.0, EventKind::deletion_started, "web-0").signal(4.004, "web-0", SIGTERM);
  b.exited(4.02, "web-0", 0);
  b.applied(5.0, "node-1", "web-0", false, true).applied(6.02, "node-2", "web-0", false, true);
  b.request(4.002, 4.006, Outcome::reset_before_response, Connection::fresh, "node-1", "web-0");
  b.event(4.005, EventKind::router_refused, "web-0", "node-1");
  Diagnosis d = diagnose(b.build(), Options{});
  ASSERT_EQ(d.failures.size(), 1u);
  EXPECT_EQ(d.failures[0].hole, Hole::deregistration_race);
  EXPECT_EQ(d.failures[0].reason, "refused by pod web-0 just after it stopped at 4.00 s");
}

TEST(Diagnose, SigkillMidRequestIsGraceOverrun) {
  RunBuilder b = steady();
  b.set("grace", "2s");
  b.request(1.0, 4.0, Outcome::ok, Connection::fresh, "node-1", "web-0");  // a 3 s request
  b.event(3.0, EventKind::deletion_started, "web-0").signal(3.0, "web-0", SIGTERM);
  b.applied(3.5, "node-1", "web-0", false, true).applied(3.8, "node-2", "web-0", false, true);
  b.killed(5.0, "web-0");
  b.request(4.0, 5.001, Outcome::reset_during_response, Connection::reused, "node-1", "web-0");
  Diagnosis d = diagnose(b.build(), Options{});
  ASSERT_EQ(d.holes.size(), 1u);
  const HoleSummary& h = d.holes[0];
  EXPECT_EQ(h.hole, Hole::grace_overrun);
  EXPECT_EQ(d.failures[0].backend_state, BackendState::after_signal);
  EXPECT_EQ(h.evidence,
            "1 request in flight at pod web-0 was cut by SIGKILL at 5.00 s, 2.00 s "
            "after its deletion at 3.00 s; the longest successful request took "
            "3.00 s");
  // preStop: 0.8 s + 1 s -> 2 s; grace: 2 + 3 + 1 = 6 s.
  EXPECT_EQ(h.fix.summary, "terminationGracePeriodSeconds 6");
  EXPECT_NE(h.fix.snippet.find("terminationGracePeriodSeconds: 6"), std::string::npos);
}

// A pod killed at the end of its grace period had not finished draining: its drain is at least
// what it was given, whatever the longest request took.
TEST(Diagnose, AKilledPodsDrainIsAtLeastItsGrace) {
  RunBuilder b = steady();
  b.set("grace", "10s");
  b.event(3.0, EventKind::deletion_started, "web-0").signal(3.0, "web-0", SIGUSR1);
  b.applied(3.5, "node-1", "web-0", false, true).applied(3.8, "node-2", "web-0", false, true);
  b.killed(13.0, "web-0");
  b.request(12.0, 13.001, Outcome::reset_during_response, Connection::reused, "node-1", "web-0");
  Diagnosis d = diagnose(b.build(), Options{});
  ASSERT_TRUE(d.longest_drain);
  EXPECT_EQ(*d.longest_drain, at(10.0));
  EXPECT_EQ(d.drain_evidence,
            "pod web-0 was still draining when SIGKILL came 10.00 s after its stop signal");
  ASSERT_EQ(d.holes.size(), 1u);
  EXPECT_EQ(d.holes[0].hole, Hole::grace_overrun);
  // preStop: 0.8 s + 1 s -> 2 s; grace: 2 + 10 + 1 = 13 s (the longest request, 1 s, would
  // have said the current 10 s covers it).
  EXPECT_EQ(d.holes[0].fix.summary, "terminationGracePeriodSeconds 13");
  EXPECT_EQ(d.holes[0].fix.why.find("already covers"), std::string::npos) << d.holes[0].fix.why;
}

TEST(Diagnose, KillWithoutDeletionIsNotGraceOverrun) {
  // The engine stopping its pods at the end of the run is no kubelet grace period.
  RunBuilder b = steady();
  b.killed(2.5, "web-1");
  b.request(2.49, 2.5, Outcome::reset_before_response, Connection::reused, "node-2", "web-1");
  Diagnosis d = diagnose(b.build(), Options{});
  ASSERT_EQ(d.failures.size(), 1u);
  EXPECT_EQ(d.failures[0].hole, Hole::unexplained);
  EXPECT_EQ(d.failures[0].reason,
            "in flight at pod web-1 when it was killed at 2.50 s without a "
            "deletion");
}

TEST(Diagnose, PodThatNeverServedIsNotCalledReadinessLies) {
  RunBuilder b = steady();
  b.pod("web-2", 2.0, 2.5);
  b.request(2.7, 2.71, Outcome::http_503, Connection::fresh, "node-1", "web-2");
  Diagnosis d = diagnose(b.build(), Options{});
  ASSERT_EQ(d.failures.size(), 1u);
  EXPECT_EQ(d.failures[0].hole, Hole::unexplained);
  EXPECT_EQ(d.failures[0].reason, "pod web-2 never answered a request successfully in this run");
}

TEST(Diagnose, ReusedConnectionAfterRouterUpdateIsKeepaliveStale) {
  RunBuilder b = steady();
  // Lingers 4 s after SIGTERM, exits without closing keep-alive connections.
  b.terminate("web-0", 3.0, 4.0);
  b.applied(4.0, "node-1", "web-0", false, true).applied(4.2, "node-2", "web-0", false, true);
  b.request(7.1, 7.101, Outcome::closed_before_response, Connection::reused, "node-1", "web-0");
  b.request(7.3, 7.301, Outcome::reset_before_response, Connection::reused, "node-2", "web-0");
  Diagnosis d = diagnose(b.build(), Options{});
  ASSERT_EQ(d.holes.size(), 1u);
  const HoleSummary& h = d.holes[0];
  EXPECT_EQ(h.hole, Hole::keepalive_stale);
  EXPECT_EQ(h.requests, 2u);
  EXPECT_TRUE(d.failures[0].router_applied);
  EXPECT_EQ(d.failures[0].backend_state, BackendState::exited);
  EXPECT_NE(h.evidence.find("after router node-2 had removed it at 4.20 s; it exited at 7.00 s"),
            std::string::npos)
      << h.evidence;
  EXPECT_NE(h.fix.summary.find("Connection: close"), std::string::npos);
  ASSERT_EQ(h.fix.steps.size(), 4u);
  EXPECT_NE(h.fix.steps[1].find("Connection: close"), std::string::npos);
}

TEST(Diagnose, InFlightOnStaleKeepaliveConnectionIsKeepaliveStale) {
  // Sent after both routers dropped web-0, on a connection keep-alive had pinned to it; the
  // lingering pod exits under it.
  RunBuilder b = steady();
  b.terminate("web-0", 3.0, 4.0);
  b.applied(4.0, "node-1", "web-0", false, true).applied(4.2, "node-2", "web-0", false, true);
  b.request(6.99, 7.0, Outcome::closed_before_response, Connection::reused, "node-1", "web-0");
  b.request(6.98, 7.0, Outcome::reset_during_response, Connection::reused, "node-1", "web-0");
  Diagnosis d = diagnose(b.build(), Options{});
  ASSERT_EQ(d.failures.size(), 2u);
  EXPECT_EQ(d.failures[0].hole, Hole::keepalive_stale);
  EXPECT_EQ(d.failures[0].backend_state, BackendState::after_signal);
  EXPECT_EQ(d.failures[1].hole, Hole::no_drain);  // the app was answering when it exited
}

TEST(Diagnose, FailuresBeforeFirstSuccessOfNewPodAreReadinessLies) {
  RunBuilder b = steady();
  b.set("readiness", "tcp").set("port", "8080");
  b.pod("web-2", 2.0, 2.5);
  b.applied(2.6, "node-1", "web-2", true, false);
  b.request(2.7, 2.71, Outcome::http_503, Connection::fresh, "node-1", "web-2");
  b.request(3.0, 3.01, Outcome::http_503, Connection::reused, "node-1", "web-2");
  b.request(3.5, 3.505, Outcome::ok, Connection::reused, "node-1", "web-2");
  Diagnosis d = diagnose(b.build(), Options{});
  ASSERT_EQ(d.holes.size(), 1u);
  const HoleSummary& h = d.holes[0];
  EXPECT_EQ(h.hole, Hole::readiness_lies);
  EXPECT_EQ(d.failures[0].backend_state, BackendState::warming);
  EXPECT_EQ(h.evidence,
            "2 requests to pod web-2 failed (http_503 2) between its Ready at 2.50 s "
            "and its first successful response at 3.50 s (readiness probe: tcp)");
  EXPECT_NE(h.fix.snippet.find("httpGet:\n    path: /readyz\n    port: 8080"), std::string::npos)
      << h.fix.snippet;
}

TEST(Diagnose, HttpProbeThatLiesIsToldToFailUntilTheAppServes) {
  RunBuilder b = steady();
  b.set("readiness", "http:/ready");
  b.pod("web-2", 2.0, 2.5);
  b.request(2.7, 2.71, Outcome::http_503, Connection::fresh, "node-1", "web-2");
  b.request(3.5, 3.505, Outcome::ok, Connection::reused, "node-1", "web-2");
  Diagnosis d = diagnose(b.build(), Options{});
  ASSERT_EQ(d.holes.size(), 1u);
  EXPECT_EQ(d.holes[0].fix.summary, "make readiness /ready fail until the app can serve");
  EXPECT_NE(d.holes[0].fix.snippet.find("path: /ready\n"), std::string::npos);
}

TEST(Diagnose, NoReadyEndpointIsCapacityDip) {
  RunBuilder b;
  b.set("replicas", "1").set("max_unavailable", "1");
  b.pod("web-0", 0.1, 0.5).applied(0.6, "node-1", "web-0", true, false);
  b.ok(1.0, 2.0, 0.1, "node-1", "web-0");
  b.event(2.0, EventKind::rollout_started, "");
  b.terminate("web-0", 2.0, 0.0).applied(2.1, "node-1", "web-0", false, true);
  b.pod("web-1", 2.0, 4.0).applied(4.1, "node-1", "web-1", true, false);
  b.request(3.0, 3.0, Outcome::connect_refused, Connection::fresh, "node-1", "");
  b.request(3.5, 3.5, Outcome::connect_refused, Connection::fresh, "node-1", "");
  Diagnosis d = diagnose(b.build(), Options{});
  ASSERT_EQ(d.holes.size(), 1u);
  const HoleSummary& h = d.holes[0];
  EXPECT_EQ(h.hole, Hole::capacity_dip);
  EXPECT_EQ(h.evidence,
            "2 requests failed (connect_refused 2) between 3.00 s and 3.50 s while as "
            "few as 0 of 1 replicas were Ready; all went through router node-1 with no ready "
            "endpoint");
  EXPECT_NE(h.fix.snippet.find("maxUnavailable: 0"), std::string::npos);
  EXPECT_NE(h.fix.why.find("(maxUnavailable 1)"), std::string::npos) << h.fix.why;
}

TEST(Diagnose, LivenessRestartDuringTerminationIsLivenessKillsDrain) {
  RunBuilder b = steady();
  b.event(3.0, EventKind::deletion_started, "web-0");
  b.event(3.0, EventKind::prestop_started, "web-0");
  b.event(4.0, EventKind::liveness_restart, "web-0");
  b.request(3.9, 4.0, Outcome::reset_before_response, Connection::reused, "node-1", "web-0");
  Diagnosis d = diagnose(b.build(), Options{});
  ASSERT_EQ(d.holes.size(), 1u);
  EXPECT_EQ(d.holes[0].hole, Hole::liveness_kills_drain);
  EXPECT_NE(d.holes[0].evidence.find("restarted it at 4.00 s, 1.00 s into its termination"),
            std::string::npos);
}

TEST(Diagnose, FailureAtServingPodIsUnexplainedAndNotRolloutRelated) {
  RunBuilder b = steady();
  b.request(1.55, 1.56, Outcome::http_5xx, Connection::reused, "node-1", "web-0");
  Diagnosis d = diagnose(b.build(), Options{});
  ASSERT_EQ(d.holes.size(), 1u);
  EXPECT_EQ(d.holes[0].hole, Hole::unexplained);
  EXPECT_FALSE(d.rollout_related);
  EXPECT_EQ(d.verdict, Verdict::fail);
  EXPECT_EQ(d.conclusion, "1 of 21 requests failed, none with a rollout-related cause");
  EXPECT_NE(d.failures[0].reason.find("while it was serving"), std::string::npos);
}

TEST(Diagnose, MixtureCountsEachHoleAndListsUnexplainedLast) {
  RunBuilder b = naive_termination();
  b.request(3.995, 4.009, Outcome::reset_before_response, Connection::reused, "node-1", "web-0");
  for (int i = 1; i <= 9; ++i) {
    double t = 4.0 + 0.1 * i;
    b.request(t, t, Outcome::connect_refused, Connection::fresh, "node-1", "web-0");
  }
  b.request(1.55, 1.56, Outcome::http_5xx, Connection::reused, "node-2", "web-1");
  b.request(1.65, 1.66, Outcome::timeout, Connection::reused, "node-2", "nobody");
  Diagnosis d = diagnose(b.build(), Options{});
  ASSERT_EQ(d.holes.size(), 3u);
  EXPECT_EQ(d.holes[0].hole, Hole::deregistration_race);
  EXPECT_EQ(d.holes[0].requests, 9u);
  EXPECT_EQ(d.holes[1].hole, Hole::no_drain);
  EXPECT_EQ(d.holes[2].hole, Hole::unexplained);
  EXPECT_EQ(d.holes[2].requests, 2u);
  EXPECT_EQ(d.failures.size(), 12u);
  EXPECT_EQ(d.totals.failed, 12u);
  EXPECT_EQ(d.conclusion,
            "12 of 32 requests failed: deregistration-race 9, no-drain 1, "
            "unexplained 2");
}

TEST(Diagnose, SimulatorBucketsGiveHolesWithoutSingleRequests) {
  record::RunRecord run;
  run.engine = "sim";
  for (int i = 0; i < 5; ++i) {
    record::TimeBucket b;
    b.start = testing::at(i);
    b.width = testing::at(1);
    b.requests = 100;
    b.outcomes[0] = i == 2 ? 90 : 100;
    b.outcomes[static_cast<size_t>(Outcome::connect_refused)] = i == 2 ? 10 : 0;
    b.failures_by_hole[static_cast<size_t>(Hole::deregistration_race)] = i == 2 ? 10 : 0;
    run.buckets.push_back(b);
  }
  Diagnosis d = diagnose(run, Options{});
  EXPECT_EQ(d.totals.requests, 500u);
  EXPECT_EQ(d.totals.failed, 10u);
  ASSERT_EQ(d.holes.size(), 1u);
  EXPECT_EQ(d.holes[0].requests, 10u);
  EXPECT_EQ(d.holes[0].first, testing::at(2));
  EXPECT_EQ(d.holes[0].last, testing::at(3));
}

TEST(Diagnose, TheRoutersOwnFailureIsNeverAHoleOfTheApp) {
  // The same 502 from node-1 to a pod that had exited: the router says why it answered itself.
  RunBuilder b = naive_termination();
  b.request(4.5, 4.5, Outcome::http_502, Connection::fresh, "node-1", "web-0");
  b.request(4.6, 4.6, Outcome::http_502, Connection::fresh, "node-1", "web-0");
  b.request(4.7, 4.7, Outcome::http_502, Connection::fresh, "node-1", "web-0");
  record::RunRecord run = b.build();
  size_t first = run.requests.size() - 3;
  run.requests[first].router_error = "bad_response";         // the router could not parse it
  run.requests[first + 1].router_error = "body_too_large";   // the router would not buffer it
  run.requests[first + 2].router_error = "connect_refused";  // the pod had stopped listening
  for (size_t i = first; i < run.requests.size(); ++i) {
    run.requests[i].status = 502;
  }
  Diagnosis d = diagnose(run, Options{});
  ASSERT_EQ(d.failures.size(), 3u);
  EXPECT_EQ(d.failures[0].hole, Hole::unexplained);
  EXPECT_EQ(d.failures[0].reason,
            "router node-1 answered 502 itself (bad_response): it could not parse the response of "
            "pod web-0; the router failed, not the app");
  EXPECT_EQ(d.failures[1].hole, Hole::unexplained);
  EXPECT_NE(d.failures[1].reason.find("would not buffer"), std::string::npos);
  // A refusal by a stopped pod is still the app's deregistration race, in the router's words too.
  EXPECT_EQ(d.failures[2].hole, Hole::deregistration_race);
  EXPECT_TRUE(d.failures[2].reason.ends_with("(router node-1 answered 502: connect_refused)"))
      << d.failures[2].reason;
  const HoleSummary* unexplained = find(d, Hole::unexplained);
  ASSERT_NE(unexplained, nullptr);
  EXPECT_EQ(unexplained->requests, 2u);
  EXPECT_NE(unexplained->evidence.find("the router failed, not the app"), std::string::npos)
      << unexplained->evidence;
}

TEST(Diagnose, AConnectionTheKernelLeftUntranslatedIsTheRoutersFailure) {
  // --dataplane nftables: node-1's kernel gave a new connection no NAT, far from any rule commit
  // of node-1 (near one it is proxy-sync-loss: sync_loss_test.cc). It went to no pod, and the
  // lab's record says why (router_error): the router's failure.
  RunBuilder b = naive_termination();
  b.request(3.0, 8.0, Outcome::connect_timeout, Connection::fresh, "node-1", "");
  record::RunRecord run = b.build();
  run.requests.back().router_error = record::kUntranslated;
  Diagnosis d = diagnose(run, Options{});
  ASSERT_EQ(d.failures.size(), 1u);
  EXPECT_EQ(d.failures[0].hole, Hole::unexplained);
  EXPECT_EQ(d.failures[0].reason,
            "connect_timeout with no pod: the kernel of node-1 gave its connection to the Service "
            "no NAT (untranslated), so it went to no pod, with no rule commit of that node near "
            "it; the router failed, not the app");
  // Without the router's word the same request is judged by what the record has.
  run.requests.back().router_error.clear();
  d = diagnose(run, Options{});
  ASSERT_EQ(d.failures.size(), 1u);
  EXPECT_EQ(d.failures[0].reason.find("the router failed"), std::string::npos);
}

}  // namespace
}  // namespace zerodrop::diagnose
