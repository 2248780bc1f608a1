// proxy-sync-loss: proved by the node's conntrack within a window of its rule commit, inferred
// (likely, possible) from a connect failure shortly after an EndpointSlice change.
#include <gtest/gtest.h>

#include "diagnose/diagnose.h"
#include "diagnose/run_builder.h"
#include "diagnose/sync_rules.h"

namespace zerodrop::diagnose {
namespace {

using record::Hole;
using testing::at;
using testing::Connection;
using testing::EventKind;
using testing::Outcome;
using testing::RunBuilder;

// Two pods serving through two nodes from 0.5 s; at 3.0 s a third pod becomes Ready (the API's
// EndpointSlice change), node-1 commits it at 3.2 s and node-2 at 3.4 s. Requests succeed
// through both nodes all along: the pods serve others.
RunBuilder scale_up() {
  RunBuilder b;
  b.set("replicas", "3").set("prestop", "none").set("grace", "30s");
  b.serving({"web-0", "web-1"}, {"node-1", "node-2"});
  b.pod("web-2", 2.0, 3.0);
  b.event(3.0, EventKind::endpoint_changed, "web-2");
  b.applied(3.2, "node-1", "web-2", true, false).applied(3.4, "node-2", "web-2", true, false);
  b.ok(1.0, 8.0, 0.1, "node-1", "web-0").ok(1.0, 8.0, 0.1, "node-2", "web-1");
  return b;
}

// One failed connect through `router` sent at `t`, no pod recorded; `untranslated`: the lab's
// conntrack said the kernel gave it no NAT.
Diagnosis lost_connect(double t, const std::string& router, bool untranslated,
                       Outcome outcome = Outcome::connect_timeout, RunBuilder b = scale_up()) {
  b.request(t, t + 1.0, outcome, Connection::fresh, router, "");
  record::RunRecord run = b.build();
  if (untranslated) {
    run.requests.back().router_error = record::kUntranslated;
  }
  return diagnose(run, Options{});
}

// A copy: the Diagnosis is a temporary of the caller's expression.
RequestDiagnosis only_failure(const Diagnosis& d) {
  EXPECT_EQ(d.failures.size(), 1u);
  return d.failures.at(0);
}

TEST(SyncLoss, ProvedWithinTheWindowOfItsNodesCommit) {
  // node-1 committed at 3.2 s: from 500 ms before to 100 ms after counts, not beyond.
  for (double t : {3.2 - 0.5, 3.2, 3.2 + 0.1}) {
    RequestDiagnosis f = only_failure(lost_connect(t, "node-1", true));
    EXPECT_EQ(f.hole, Hole::proxy_sync_loss) << t;
    EXPECT_NE(f.reason.find("(proved)"), std::string::npos) << f.reason;
  }
  RequestDiagnosis early = only_failure(lost_connect(3.2 - 0.501, "node-1", true));
  EXPECT_EQ(early.hole, Hole::unexplained);
  EXPECT_NE(early.reason.find("no rule commit of that node near it"), std::string::npos)
      << early.reason;
  EXPECT_EQ(only_failure(lost_connect(3.2 + 0.101, "node-1", true)).hole, Hole::unexplained);
}

TEST(SyncLoss, ProvedQuotesTheCommit) {
  RequestDiagnosis f = only_failure(lost_connect(3.2001, "node-1", true));
  EXPECT_EQ(f.reason,
            "connect_timeout with no pod (proved): the kernel of node-1 gave the connection to the "
            "Service no NAT (conntrack: untranslated) 0.1 ms after node-1 committed web-2's "
            "change; the node's proxy lost it while it rewrote its rules, not the app");
}

TEST(SyncLoss, OnlyItsOwnNodesCommitCounts) {
  // node-2 committed at 3.4 s; a connect through node-1 at 3.45 s is 250 ms after node-1's.
  EXPECT_EQ(only_failure(lost_connect(3.45, "node-1", true)).hole, Hole::unexplained);
  EXPECT_EQ(only_failure(lost_connect(3.45, "node-2", true)).hole, Hole::proxy_sync_loss);
}

TEST(SyncLoss, ARuleSyncNoteIsItsNodesCommitToo) {
  // The lab's --dataplane-churn syncs change nothing: the node notes the one nearest an
  // untranslated connection (record::kRuleSync, its router set); a note without one is no commit.
  RunBuilder b = scale_up();
  b.event(6.0, EventKind::note, "", "node-1");
  b.event(7.0, EventKind::note, "");
  for (record::Event& e : b.events()) {
    if (e.kind == EventKind::note) {
      e.detail = std::string(record::kRuleSync) + " (--dataplane-churn)";
    }
  }
  RequestDiagnosis f =
      only_failure(lost_connect(6.0002, "node-1", true, Outcome::connect_timeout, b));
  EXPECT_EQ(f.hole, Hole::proxy_sync_loss);
  EXPECT_NE(f.reason.find("0.2 ms after node-1's rule sync (--dataplane-churn); "),
            std::string::npos)
      << f.reason;
  EXPECT_EQ(only_failure(lost_connect(7.0, "node-1", true, Outcome::connect_timeout, b)).hole,
            Hole::unexplained);
}

TEST(SyncLoss, InferredLikelyThenPossibleWithinTheChangesWindow) {
  // The API saw the change at 3.0 s: likely up to 1 s after, possible up to 2 s, then nothing.
  for (double t : {3.0, 4.0}) {
    RequestDiagnosis f = only_failure(lost_connect(t, "node-1", false));
    EXPECT_EQ(f.hole, Hole::proxy_sync_loss) << t;
    EXPECT_NE(f.reason.find("(likely, inferred"), std::string::npos) << f.reason;
  }
  for (double t : {4.001, 5.0}) {
    RequestDiagnosis f = only_failure(lost_connect(t, "node-1", false));
    EXPECT_EQ(f.hole, Hole::proxy_sync_loss) << t;
    EXPECT_NE(f.reason.find("(possible, inferred"), std::string::npos) << f.reason;
  }
  EXPECT_NE(only_failure(lost_connect(5.001, "node-1", false)).hole, Hole::proxy_sync_loss);
  EXPECT_NE(only_failure(lost_connect(2.999, "node-1", false)).hole, Hole::proxy_sync_loss);
  // A refusal too (kube-proxy's nftables mode refuses what its nat hook left untranslated).
  EXPECT_EQ(only_failure(lost_connect(3.5, "node-2", false, Outcome::connect_refused)).hole,
            Hole::proxy_sync_loss);
}

TEST(SyncLoss, InferredReasonSaysHowSureAndWhy) {
  RequestDiagnosis f = only_failure(lost_connect(3.5, "node-1", false));
  EXPECT_EQ(f.reason,
            "connect_timeout on node-1 (likely, inferred: no conntrack in the record) 0.50 s after "
            "the EndpointSlice change of web-2 at 3.00 s, while 3 pods were Ready, none "
            "terminating, and 42 other requests within 1 s succeeded: the node's proxy was "
            "rewriting its rules");
}

TEST(SyncLoss, NotInferredWhileAPodTerminatesOrNothingServes) {
  // A pod terminating: its own refusals and the routers' lag explain a connect failure better.
  RunBuilder terminating = scale_up();
  terminating.terminate("web-0", 3.1, 5.0);
  EXPECT_NE(only_failure(lost_connect(3.5, "node-1", false, Outcome::connect_timeout,
                                      std::move(terminating)))
                .hole,
            Hole::proxy_sync_loss);
  // No request succeeded within 1 s: the pods were not serving others.
  RunBuilder idle;
  idle.set("replicas", "2");
  idle.pod("web-0", 0.1, 0.5).pod("web-1", 0.1, 0.5);
  idle.event(3.0, EventKind::endpoint_changed, "web-1");
  idle.ok(1.0, 2.0, 0.1, "node-1", "web-0");
  EXPECT_NE(
      only_failure(lost_connect(3.5, "node-1", false, Outcome::connect_timeout, std::move(idle)))
          .hole,
      Hole::proxy_sync_loss);
  // A timeout of a request (not its connect), or one with its pod known, is not this hole.
  EXPECT_NE(only_failure(lost_connect(3.5, "node-1", false, Outcome::timeout)).hole,
            Hole::proxy_sync_loss);
}

TEST(SyncLoss, EvidenceCountsEachProofAndFixSaysRetryIsSafe) {
  RunBuilder b = scale_up();
  b.request(3.19, 4.19, Outcome::connect_timeout, Connection::fresh, "node-1", "");
  b.request(3.6, 4.6, Outcome::connect_refused, Connection::fresh, "node-2", "");
  record::RunRecord run = b.build();
  run.requests[run.requests.size() - 2].router_error = record::kUntranslated;
  Diagnosis d = diagnose(run, Options{});
  ASSERT_EQ(d.holes.size(), 1u);
  EXPECT_EQ(d.holes[0].hole, Hole::proxy_sync_loss);
  EXPECT_NE(d.holes[0].evidence.find("2 new connects lost by the proxy of node-1, node-2 while it "
                                     "rewrote its rules (1 likely, 1 proved); first: "),
            std::string::npos)
      << d.holes[0].evidence;
  EXPECT_NE(d.holes[0].fix.why.find("a retry is safe"), std::string::npos) << d.holes[0].fix.why;
}

}  // namespace
}  // namespace zerodrop::diagnose
