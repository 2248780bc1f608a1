// verify's failures: a failed new connection that names no backend but lists the pods it may
// have reached (several pods terminating at once) gets a hole only when every one of them gives
// that hole; one the router kept no record of is judged by its send time against the signal.

#include <gtest/gtest.h>

#include "diagnose/diagnose.h"
#include "diagnose/run_builder.h"

namespace zerodrop::diagnose {
namespace {

using record::Hole;
using testing::Connection;
using testing::EventKind;
using testing::Outcome;
using testing::RunBuilder;

// web-0, web-1 and web-2 serve from 0.5 s. web-0 is deleted at 4 s and exits at once; web-1 is
// deleted at 4.2 s, its preStop runs until 5.2 s; node-1 applies both terminations at 6 s.
RunBuilder two_terminating() {
  RunBuilder b;
  b.set("replicas", "3").set("grace", "30s");
  b.serving({"web-0", "web-1", "web-2"}, {"node/node-1"});
  b.ok(1.0, 2.0, 0.1, "node/node-1", "web-2");
  b.terminate("web-0", 4.0, 0.01);
  b.event(4.2, EventKind::deletion_started, "web-1")
      .event(4.2, EventKind::prestop_started, "web-1");
  b.signal(5.2, "web-1", SIGTERM).exited(5.21, "web-1", 0);
  b.applied(6.0, "node/node-1", "web-0", false, true)
      .applied(6.0, "node/node-1", "web-1", false, true);
  return b;
}

Diagnosis with_candidates(double sent, const std::vector<std::string>& candidates) {
  RunBuilder b = two_terminating();
  b.request(sent, sent + 0.001, Outcome::reset_before_response, Connection::fresh, "node/node-1",
            "");
  record::RunRecord run = b.build();
  run.requests.back().backend_candidates = candidates;
  return diagnose(run, Options{});
}

// Both had stopped (web-1's signal at 5.2 s) before node-1 dropped them: the race either way.
TEST(DiagnoseCandidates, EveryCandidateGivingOneHoleNamesIt) {
  Diagnosis d = with_candidates(5.5, {"web-0", "web-1"});
  ASSERT_EQ(d.failures.size(), 1u);
  EXPECT_EQ(d.failures[0].hole, Hole::deregistration_race) << d.failures[0].reason;
  EXPECT_EQ(d.failures[0].reason.rfind("at one of pods web-0, web-1, for each of them: ", 0), 0u)
      << d.failures[0].reason;
}

// At 4.5 s web-1 was still in its preStop (serving): a reset there is no rollout hole, at web-0
// it is the race. The two disagree: unexplained, naming each.
TEST(DiagnoseCandidates, CandidatesGivingDifferentHolesAreUnexplained) {
  Diagnosis d = with_candidates(4.5, {"web-0", "web-1"});
  ASSERT_EQ(d.failures.size(), 1u);
  EXPECT_EQ(d.failures[0].hole, Hole::unexplained);
  EXPECT_NE(d.failures[0].reason.find("one of pods web-0, web-1 (web-0: deregistration-race, "
                                      "web-1: unexplained)"),
            std::string::npos)
      << d.failures[0].reason;
}

// A new connection sent after web-0's stop signal, reset before any response, with no router
// record of its connection (verify): it reached a pod that had stopped taking connections, the
// race, not a request in flight at web-0's exit.
TEST(DiagnoseCandidates, AFreshFailureAfterTheSignalWithoutARouterRecordIsTheRace) {
  RunBuilder b = two_terminating();
  b.request(4.005, 4.006, Outcome::reset_before_response, Connection::fresh, "node/node-1",
            "web-0");
  Diagnosis d = diagnose(b.build(), Options{});
  ASSERT_EQ(d.failures.size(), 1u);
  EXPECT_EQ(d.failures[0].hole, Hole::deregistration_race) << d.failures[0].reason;
}

}  // namespace
}  // namespace zerodrop::diagnose
