// A record with requests and no pod or router events (a `zerodrop load --out` run).
#include <gtest/gtest.h>

#include "diagnose/diagnose.h"
#include "diagnose/run_builder.h"

namespace zerodrop::diagnose {
namespace {

using record::Hole;
using testing::at;
using testing::Connection;
using testing::EventKind;
using testing::Outcome;
using testing::RunBuilder;

// Load through a server restarted by hand: refused from 3 s to 4 s, one reset at 2.95 s; the
// load engine's disruption from 2.95 s to 4.05 s. The backend header named the server.
record::RunRecord load_run(double replicas_hint = 0) {
  RunBuilder b;
  if (replicas_hint > 0) {
    b.set("replicas", "3");  // even with a replica count, no pod says how many were Ready
  }
  b.ok(0.0, 2.9, 0.1, "", "server");
  b.request(2.95, 2.96, Outcome::reset_before_response, Connection::reused, "", "server");
  for (int i = 0; i < 10; ++i) {
    double t = 3.0 + 0.1 * i;
    b.request(t, t + 0.001, Outcome::connect_refused, Connection::fresh, "", "");
  }
  b.request(4.0, 4.01, Outcome::timeout, Connection::fresh, "", "");
  b.ok(4.1, 6.0, 0.1, "", "server");
  b.event(2.95, EventKind::disruption_started, "");
  b.event(4.05, EventKind::disruption_ended, "");
  return b.build();
}

TEST(TrafficOnly, NamesNoHoleAndSaysWhatItCan) {
  for (double replicas : {0.0, 3.0}) {
    Diagnosis d = diagnose(load_run(replicas), Options{});
    ASSERT_EQ(d.holes.size(), 1u);
    const HoleSummary& h = d.holes[0];
    EXPECT_EQ(h.hole, Hole::unexplained);
    EXPECT_EQ(h.requests, 12u);
    EXPECT_EQ(h.evidence,
              "12 failed requests: connect_refused 10 (3.00 s to 3.90 s), "
              "reset_before_response 1 (2.95 s to 2.95 s), timeout 1 (4.00 s to 4.00 s); "
              "the longest disruption lasted 1.10 s, from 2.95 s to 4.05 s; the record has no "
              "pod or router events, so no hole can be named");
    EXPECT_EQ(h.fix.summary, "record pod and router events to name the hole");
    EXPECT_TRUE(h.fix.snippet.empty());
    ASSERT_TRUE(d.disruption);
    EXPECT_EQ(d.disruption->start, at(2.95));
    EXPECT_EQ(d.disruption->end, at(4.05));
    std::string head = "12 of " + std::to_string(d.totals.requests) + " requests failed";
    EXPECT_NE(d.conclusion.find(head + " (connect_refused 10"), std::string::npos) << d.conclusion;
    EXPECT_NE(d.conclusion.find("no hole can be named"), std::string::npos) << d.conclusion;
    EXPECT_FALSE(d.rollout_related);
  }
}

TEST(TrafficOnly, APassingLoadRunPasses) {
  RunBuilder b;
  b.ok(0.0, 2.0, 0.1, "", "");
  Diagnosis d = diagnose(b.build(), Options{});
  EXPECT_EQ(d.verdict, Verdict::pass);
  EXPECT_FALSE(d.disruption);
  EXPECT_EQ(d.conclusion, "no request failed (20 requests)");
}

}  // namespace
}  // namespace zerodrop::diagnose
