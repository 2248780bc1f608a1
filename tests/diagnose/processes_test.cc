// The diagnosis of what each process of a pod did: a stop signal that did nothing (SIGKILL at
// grace), and the exit of a worker process that broke requests before its main process exited.
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

RunBuilder serving() {
  RunBuilder b;
  b.set("replicas", "2").set("prestop", "none").set("grace", "5s");
  b.serving({"web-0", "web-1"}, {"node-1"});
  b.ok(1.0, 2.0, 0.1, "node-1", "web-0");
  b.event(2.0, EventKind::rollout_started, "");
  return b;
}

const HoleSummary* hole_summary(const Diagnosis& d, Hole hole) {
  for (const HoleSummary& h : d.holes) {
    if (h.hole == hole) {
      return &h;
    }
  }
  return nullptr;
}

// A pod's PID 1 without a SIGTERM handler: it served on until SIGKILL at 9 s cut one request.
RunBuilder ignored_stop() {
  RunBuilder b = serving();
  b.event(4.0, EventKind::deletion_started, "web-0").signal(4.0, "web-0", SIGTERM);
  b.event(4.0, EventKind::signal_ignored, "web-0");
  b.applied(5.0, "node-1", "web-0", false, true);
  b.ok(4.0, 5.0, 0.25, "node-1", "web-0");  // 4 answered after the signal
  b.killed(9.0, "web-0");
  return b;
}

TEST(Processes, StopSignalThatDidNothingIsNamedWithItsKillAndWait) {
  RunBuilder b = ignored_stop();
  record::RunRecord run = b.build();
  for (record::Event& e : run.events) {
    if (e.kind == EventKind::signal_ignored) {
      e.detail = "PID 1 (bash) has no handler for SIGTERM";
    }
  }
  record::RequestRecord cut = run.requests.back();
  cut.intended = testing::at(8.99);
  cut.sent = cut.intended;
  cut.done = testing::at(9.0);
  cut.outcome = Outcome::reset_during_response;
  cut.failed = true;
  run.requests.push_back(cut);
  Diagnosis d = diagnose(run, Options{});
  ASSERT_EQ(d.grace_kills.size(), 1u);
  const GraceKill& k = d.grace_kills[0];
  EXPECT_EQ(k.pod, "web-0");
  EXPECT_EQ(k.ignored, "PID 1 (bash) has no handler for SIGTERM");
  EXPECT_EQ(k.served_after, 4u);
  EXPECT_EQ(k.cut, 1u);
  EXPECT_EQ(k.waited, testing::at(5.0));
  EXPECT_FALSE(hole_summary(d, Hole::deregistration_race));
  EXPECT_TRUE(hole_summary(d, Hole::grace_overrun));
  EXPECT_NE(d.conclusion.find("the stop signal did nothing at 1 pod: SIGKILL at the end of the "
                              "grace period cut 1 request, and each took up to 5.00 s from its "
                              "deletion to its exit"),
            std::string::npos)
      << d.conclusion;
}

TEST(Processes, APassWithAKillAtGraceStillSaysSo) {
  Diagnosis d = diagnose(ignored_stop().build(), Options{});
  EXPECT_EQ(d.verdict, Verdict::pass);
  ASSERT_EQ(d.grace_kills.size(), 1u);
  EXPECT_EQ(d.grace_kills[0].cut, 0u);
  EXPECT_NE(d.conclusion.find("the stop signal did nothing at 1 pod"), std::string::npos)
      << d.conclusion;
}

TEST(Processes, APodThatExitedOnItsOwnIsNoGraceKill) {
  RunBuilder b = serving();
  b.terminate("web-0", 4.0, 0.5);
  Diagnosis d = diagnose(b.build(), Options{});
  EXPECT_TRUE(d.grace_kills.empty());
  EXPECT_EQ(d.conclusion.find("grace period"), std::string::npos) << d.conclusion;
}

// A pre-fork server: its worker dies 6 ms after SIGTERM with a request in flight; the master
// exits 300 ms later.
TEST(Processes, TheWorkerThatDiedIsQuotedNotTheMaster) {
  RunBuilder b = serving();
  b.event(4.0, EventKind::deletion_started, "web-0").signal(4.0, "web-0", SIGTERM);
  b.event(4.006, EventKind::process_exited, "web-0");
  record::RunRecord run = b.build();
  run.events.back().signal = SIGTERM;
  run.events.back().detail = "pid 4242 (python3) killed by SIGTERM";
  record::Event master = run.events.back();
  master.kind = EventKind::pod_exited;
  master.t = testing::at(4.306);
  master.signal.reset();
  master.exit_code = 0;
  master.detail = "exit code 0";
  run.events.push_back(master);
  record::RequestRecord r;
  r.intended = testing::at(3.99);
  r.sent = r.intended;
  r.done = testing::at(4.0062);
  r.outcome = Outcome::reset_before_response;
  r.failed = true;
  r.connection = Connection::reused;
  r.router = "node-1";
  r.backend = "web-0";
  run.requests.push_back(r);
  Diagnosis d = diagnose(run, Options{});
  const HoleSummary* h = hole_summary(d, Hole::no_drain);
  ASSERT_TRUE(h);
  EXPECT_EQ(h->evidence,
            "1 request in flight at pod web-0 broke when its process pid 4242 (python3) exited "
            "at 4.01 s (killed by SIGTERM), 6.0 ms after SIGTERM, 0.30 s before its main "
            "process exited (reset_before_response 1)");
  ASSERT_EQ(d.failures.size(), 1u);
  EXPECT_EQ(d.failures[0].reason,
            "in flight at pod web-0, broken when its process pid 4242 (python3) exited at "
            "4.01 s (killed by SIGTERM)");
  ASSERT_EQ(d.pods.front().process_exits.size(), 1u);
  EXPECT_EQ(d.pods.front().process_exits[0].process, "pid 4242 (python3)");
}

}  // namespace
}  // namespace zerodrop::diagnose
