// The diagnosis joins a failure to what became of its own connection (the l4 router's record),
// never to another request's refusal nearby: one event, one hole, its own time.

#include <gtest/gtest.h>

#include "diagnose/diagnose.h"
#include "diagnose/run_builder.h"

namespace zerodrop::diagnose {
namespace {

using record::BackendFate;
using record::Hole;
using testing::Connection;
using testing::EventKind;
using testing::Outcome;
using testing::RunBuilder;

// web-0 and web-1 serve through node-1 and node-2 from 0.5 s; web-0 is deleted at 4 s and gets
// `stop_signal` at once; it exits `exit_after` seconds later; the routers update at 5 s.
RunBuilder deleted_at_4(int stop_signal, double exit_after) {
  RunBuilder b;
  b.set("replicas", "2").set("prestop", "none").set("grace", "30s");
  b.serving({"web-0", "web-1"}, {"node-1", "node-2"});
  b.ok(1.0, 2.0, 0.1, "node-1", "web-0").ok(1.0, 2.0, 0.1, "node-2", "web-1");
  b.event(4.0, EventKind::deletion_started, "web-0").signal(4.0, "web-0", stop_signal);
  b.exited(4.0 + exit_after, "web-0", 0);
  b.applied(5.0, "node-1", "web-0", false, true).applied(5.0, "node-2", "web-0", false, true);
  return b;
}

// A request held 25 ms and reset when the process exited is no-drain, even when another request
// through the same router was refused 30 ms later (that one alone is the deregistration race).
TEST(DiagnoseConnection, AResetAtExitIsNoDrainWhateverRefusalsAreNear) {
  RunBuilder b = deleted_at_4(SIGTERM, 0.03);
  b.request(3.995, 4.03, Outcome::reset_before_response, Connection::fresh, "node-1", "web-0");
  b.fate(BackendFate::reset, 4.029);
  b.event(4.06, EventKind::router_refused, "web-0", "node-1");
  b.request(4.06, 4.061, Outcome::reset_before_response, Connection::fresh, "node-1", "web-0");
  b.fate(BackendFate::refused, 4.06);
  Diagnosis d = diagnose(b.build(), Options{});
  ASSERT_EQ(d.failures.size(), 2u);
  EXPECT_EQ(d.failures[0].hole, Hole::no_drain) << d.failures[0].reason;
  EXPECT_EQ(d.failures[0].reason,
            "in flight at pod web-0, its connection reset at 4.03 s, at the pod's exit");
  EXPECT_EQ(d.failures[1].hole, Hole::deregistration_race) << d.failures[1].reason;
}

// A request that crosses a keep-alive connection the pod closed while idle after its stop signal
// is keepalive-stale at the close's own time, not no-drain at the exit a second later.
TEST(DiagnoseConnection, TheIdleCloseRaceIsKeepaliveStaleAtItsOwnTime) {
  RunBuilder b = deleted_at_4(SIGINT, 1.02);
  b.request(4.000081, 4.0002, Outcome::closed_before_response, Connection::reused, "node-1",
            "web-0");
  b.fate(BackendFate::idle_closed, 4.0001);
  Diagnosis d = diagnose(b.build(), Options{});
  ASSERT_EQ(d.failures.size(), 1u);
  EXPECT_EQ(d.failures[0].hole, Hole::keepalive_stale) << d.failures[0].reason;
  EXPECT_EQ(d.failures[0].reason,
            "pod web-0 closed this idle keep-alive connection at 4.00 s (0.1 ms after its "
            "SIGINT) as the request crossed it (the idle-close race)");
}

// node's server.close() closes idle connections and exits 2 ms later: the idle close is still its
// own (keepalive-stale); a process killed by its signal closed nothing itself (no-drain at exit).
TEST(DiagnoseConnection, AnIdleCloseIsTheAppsUnlessASignalKilledIt) {
  RunBuilder own = deleted_at_4(SIGTERM, 0.002);
  own.request(4.0005, 4.0011, Outcome::closed_before_response, Connection::reused, "node-1",
              "web-0");
  own.fate(BackendFate::idle_closed, 4.001);
  Diagnosis d = diagnose(own.build(), Options{});
  ASSERT_EQ(d.failures.size(), 1u);
  EXPECT_EQ(d.failures[0].hole, Hole::keepalive_stale) << d.failures[0].reason;

  RunBuilder killed = deleted_at_4(SIGTERM, 0.002);
  record::RunRecord run = killed.build();
  for (record::Event& e : run.events) {
    if (e.kind == EventKind::pod_exited) {
      e.exit_code.reset();
      e.signal = SIGTERM;  // died of its stop signal
    }
  }
  run.requests.push_back(run.requests.back());
  record::RequestRecord& r = run.requests.back();
  r.sent = r.intended = testing::at(4.0005);
  r.done = testing::at(4.0011);
  r.outcome = Outcome::closed_before_response;
  r.failed = true;
  r.backend = "web-0";
  r.router = "node-1";
  r.connection = Connection::reused;
  r.backend_fate = BackendFate::idle_closed;
  r.backend_fate_at = testing::at(4.001);
  d = diagnose(run, Options{});
  ASSERT_EQ(d.failures.size(), 1u);
  EXPECT_EQ(d.failures[0].hole, Hole::no_drain) << d.failures[0].reason;
}

// A new connection the pod's kernel accepted into the backlog, reset when the app closed its
// listener (the process runs on), is the deregistration race, not no-drain.
TEST(DiagnoseConnection, ABacklogResetAtListenerCloseIsDeregistrationRace) {
  RunBuilder b = deleted_at_4(SIGTERM, 2.0);
  b.request(4.3, 4.31, Outcome::reset_before_response, Connection::fresh, "node-1", "web-0");
  b.fate(BackendFate::reset, 4.31);
  b.request(4.4, 4.4002, Outcome::reset_before_response, Connection::fresh, "node-2", "web-0");
  b.fate(BackendFate::idle_closed, 4.4001);
  Diagnosis d = diagnose(b.build(), Options{});
  ASSERT_EQ(d.failures.size(), 2u);
  for (const RequestDiagnosis& f : d.failures) {
    EXPECT_EQ(f.hole, Hole::deregistration_race) << f.reason;
  }
  EXPECT_EQ(d.failures[0].reason,
            "new connection accepted by pod web-0, then reset at 4.31 s (0.31 s after its "
            "SIGTERM) before any response: it had stopped taking connections");
}

// The pod reset a reused connection with a request pending on it for a while, still running:
// it did not drain that request.
TEST(DiagnoseConnection, AResetWithARequestPendingWhileRunningIsNoDrain) {
  RunBuilder b = deleted_at_4(SIGTERM, 2.0);
  b.request(4.2, 4.25, Outcome::reset_before_response, Connection::reused, "node-1", "web-0");
  b.fate(BackendFate::reset, 4.25);
  Diagnosis d = diagnose(b.build(), Options{});
  ASSERT_EQ(d.failures.size(), 1u);
  EXPECT_EQ(d.failures[0].hole, Hole::no_drain);
  EXPECT_EQ(d.failures[0].reason,
            "in flight at pod web-0, which reset its connection at 4.25 s (0.25 s after its "
            "SIGTERM) while running");
}

// An idle close while the pod was not terminating is the server's keep-alive timeout racing the
// client: no hole of the rollout.
TEST(DiagnoseConnection, AnIdleCloseWhileServingIsNoHoleOfTheRollout) {
  RunBuilder b = deleted_at_4(SIGTERM, 2.0);
  b.request(3.0, 3.0002, Outcome::closed_before_response, Connection::reused, "node-1", "web-0");
  b.fate(BackendFate::idle_closed, 3.0001);
  Diagnosis d = diagnose(b.build(), Options{});
  ASSERT_EQ(d.failures.size(), 1u);
  EXPECT_EQ(d.failures[0].hole, Hole::unexplained);
  EXPECT_FALSE(d.rollout_related);
}

// The same event gets the same hole wherever it falls among the others: each failure is judged on
// its own connection only.
TEST(DiagnoseConnection, TheSameEventGetsTheSameHoleWhateverItsNeighbours) {
  for (double neighbour : {4.0002, 4.02, 4.5}) {
    RunBuilder b = deleted_at_4(SIGTERM, 1.0);
    b.request(4.0001, 4.0003, Outcome::closed_before_response, Connection::reused, "node-1",
              "web-0");
    b.fate(BackendFate::idle_closed, 4.0002);
    b.event(neighbour, EventKind::router_refused, "web-0", "node-1");
    b.request(neighbour, neighbour, Outcome::reset_before_response, Connection::fresh, "node-1",
              "web-0");
    b.fate(BackendFate::refused, neighbour);
    Diagnosis d = diagnose(b.build(), Options{});
    ASSERT_EQ(d.failures.size(), 2u);
    EXPECT_EQ(d.failures[0].hole, Hole::keepalive_stale) << neighbour;
    EXPECT_EQ(d.failures[1].hole, Hole::deregistration_race) << neighbour;
  }
}

// gunicorn closes its listener 2 s after SIGTERM (the connections in its accept queue are reset)
// and, on a busy machine, is SIGKILLed at grace 3 s later, or exits in time: the same event gets
// the same hole. Only a death by the stop signal itself (no handler) makes later closes "at exit".
TEST(DiagnoseConnection, ABacklogResetIsTheSameHoleWhetherTheGraceKillCameLaterOrNot) {
  for (bool killed : {true, false}) {
    RunBuilder b = deleted_at_4(SIGTERM, 5.0);
    b.request(4.5, 6.0, Outcome::reset_before_response, Connection::fresh, "node-1", "web-0");
    b.fate(BackendFate::reset, 6.0);
    record::RunRecord run = b.build();
    for (record::Event& e : run.events) {
      if (killed && e.kind == EventKind::pod_exited) {
        e.exit_code.reset();
        e.signal = SIGKILL;
      }
    }
    if (killed) {
      record::Event kill;
      kill.t = testing::at(9.0);
      kill.kind = EventKind::signal_sent;
      kill.pod = "web-0";
      kill.signal = SIGKILL;
      run.events.push_back(kill);
    }
    Diagnosis d = diagnose(run, Options{});
    ASSERT_EQ(d.failures.size(), 1u);
    EXPECT_EQ(d.failures[0].hole, Hole::deregistration_race) << killed << d.failures[0].reason;
    EXPECT_EQ(d.failures[0].reason,
              "new connection accepted by pod web-0, then reset at 6.00 s (2.00 s after its "
              "SIGTERM) before any response: it had stopped taking connections");
  }
}

// The l4 router binds a new connection at its accept; on a busy machine the client writes its
// request later. Bound before the router applied the termination, it went to the old pod rightly
// however late it was sent: the deregistration race, not a router that ignored its update.
TEST(DiagnoseConnection, ANewConnectionBoundBeforeTheUpdateIsTheDeregistrationRace) {
  RunBuilder b = deleted_at_4(SIGTERM, 0.5);
  b.request(5.02, 5.03, Outcome::reset_before_response, Connection::fresh, "node-1", "web-0");
  b.bound(4.999).fate(BackendFate::refused, 5.001);
  b.request(5.02, 5.03, Outcome::closed_before_response, Connection::fresh, "node-2", "web-0");
  b.bound(4.998);
  Diagnosis d = diagnose(b.build(), Options{});
  ASSERT_EQ(d.failures.size(), 2u);
  for (const RequestDiagnosis& f : d.failures) {
    EXPECT_EQ(f.hole, Hole::deregistration_race) << f.reason;
    EXPECT_FALSE(f.router_applied);
  }
  EXPECT_EQ(d.failures[1].reason,
            "new connection to pod web-0 (exited) before router node-2 applied its termination");
}

// Bound after the router applied the pod's removal, the connection is the router's fault, even
// when the client wrote its request before the update (the router accepted it late).
TEST(DiagnoseConnection, ANewConnectionBoundAfterTheUpdateIsStillFlagged) {
  record::RunRecord run = deleted_at_4(SIGTERM, 0.5).build();
  for (record::Event& e : run.events) {
    if (e.kind == EventKind::router_applied && e.router == "node-1" && e.t == testing::at(5.0)) {
      e.t = testing::at(5.2);  // node-1's update removes web-0 outright
      e.conditions.reset();
      e.detail = "removed";
    }
  }
  record::RunRecord sent_before = deleted_at_4(SIGTERM, 0.5).build();
  for (record::RunRecord* r : {&run, &sent_before}) {
    bool before = r == &sent_before;
    record::RequestRecord q;
    q.intended = testing::at(before ? 4.99 : 5.3);
    q.sent = q.intended;
    q.done = testing::at(5.31);
    q.outcome = Outcome::reset_before_response;
    q.failed = true;
    q.router = "node-1";
    q.backend = "web-0";
    q.bound = testing::at(before ? 5.01 : 5.25);
    r->requests.push_back(q);
    Diagnosis d = diagnose(*r, Options{});
    ASSERT_EQ(d.failures.size(), 1u);
    EXPECT_EQ(d.failures[0].hole, Hole::unexplained) << d.failures[0].reason;
    EXPECT_TRUE(d.failures[0].router_applied);
  }
  EXPECT_EQ(diagnose(sent_before, Options{}).failures[0].reason,
            "router node-1 applied web-0's termination at 5.00 s yet sent it a new connection at "
            "5.01 s");
}

// The lab's SIGKILL of the pods still running when the run ends is no grace kill.
TEST(DiagnoseWords, TheEndOfRunKillIsNotAGraceKill) {
  RunBuilder b = deleted_at_4(SIGTERM, 2.0);
  b.event(9.0, EventKind::signal_sent, "web-1");
  record::RunRecord run = b.build();
  run.events.back().signal = SIGKILL;
  run.events.back().detail = std::string(record::kEndOfRunKill);
  record::Event exit;
  exit.t = testing::at(9.001);
  exit.kind = EventKind::pod_exited;
  exit.pod = "web-1";
  exit.signal = SIGKILL;
  run.events.push_back(exit);
  record::RequestRecord r = run.requests.back();
  r.sent = r.intended = testing::at(8.99);
  r.done = testing::at(9.001);
  r.outcome = Outcome::reset_before_response;
  r.failed = true;
  r.backend = "web-1";
  run.requests.push_back(r);
  Diagnosis d = diagnose(run, Options{});
  ASSERT_EQ(d.failures.size(), 1u);
  EXPECT_EQ(d.failures[0].hole, Hole::unexplained);
  EXPECT_EQ(d.failures[0].reason,
            "in flight at pod web-1 when the run ended and the lab killed it at 9.00 s (not a "
            "grace kill)");
  EXPECT_FALSE(d.pods[1].kill);
  EXPECT_EQ(d.pods[1].end_of_run_kill, testing::at(9.0));
}

// Headers and app advice name the stop signal the pods got; one moment reads "at T".
TEST(DiagnoseWords, AdviceNamesTheStopSignalAndOneMomentReadsAt) {
  RunBuilder b = deleted_at_4(SIGQUIT, 1.0);
  b.request(5.5, 5.5002, Outcome::closed_before_response, Connection::reused, "node-1", "web-0");
  Diagnosis d = diagnose(b.build(), Options{});
  EXPECT_EQ(stop_signal_name(d), "SIGQUIT");
  ASSERT_EQ(d.holes.size(), 1u);
  EXPECT_EQ(d.holes[0].hole, Hole::keepalive_stale);
  EXPECT_NE(d.holes[0].evidence.find("failed (closed_before_response 1) at 5.50 s"),
            std::string::npos)
      << d.holes[0].evidence;
  std::string steps;
  for (const std::string& s : d.holes[0].fix.steps) {
    steps += s + "\n";
  }
  EXPECT_NE(steps.find("From SIGQUIT, answer"), std::string::npos) << steps;
  EXPECT_EQ(steps.find("SIGTERM"), std::string::npos) << steps;
}

}  // namespace
}  // namespace zerodrop::diagnose
