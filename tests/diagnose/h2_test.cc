// HTTP/2 and gRPC: what GOAWAY frames, and their absence, say about a failed RPC; notes when
// nothing failed; per-language steps in the fixes.

#include <gtest/gtest.h>

#include "diagnose/diagnose.h"
#include "diagnose/run_builder.h"

namespace zerodrop::diagnose {
namespace {

using record::BackendFate;
using record::Hole;
using testing::at;
using testing::Connection;
using testing::EventKind;
using testing::Outcome;
using testing::RunBuilder;

constexpr uint32_t kInternalError = 2;

// web-0 and web-1 serve gRPC through node-1 from 0.5 s; web-0 is deleted and gets SIGTERM at
// 4 s and exits at 4.1 s; node-1 drops it at 5 s.
RunBuilder grpc_run() {
  RunBuilder b;
  b.set("replicas", "2").set("prestop", "none").set("grace", "30s").set("protocol", "grpc");
  for (const char* pod : {"web-0", "web-1"}) {
    b.pod(pod, 0.1, 0.5).applied(0.6, "node-1", pod, true, false);
  }
  b.ok(1.0, 2.0, 0.1, "node-1", "web-0").ok(1.0, 2.0, 0.1, "node-1", "web-1");
  b.terminate("web-0", 4.0, 0.1).applied(5.0, "node-1", "web-0", false, true);
  return b;
}

record::Http2Facts facts(uint32_t conn, uint32_t stream) {
  record::Http2Facts h;
  h.proto = record::Proto::grpc;
  h.conn = conn;
  h.stream = stream;
  return h;
}

record::Event connection_event(double t, EventKind kind, uint32_t conn,
                               std::optional<record::GoawayRecord> goaway) {
  record::Event e;
  e.t = at(t);
  e.kind = kind;
  e.pod = "web-0";
  e.router = "node-1";
  e.connection = record::ConnectionFacts{conn, 40000, std::move(goaway)};
  return e;
}

TEST(DiagnoseH2, ADrainCutShortIsNoDrain) {
  RunBuilder b = grpc_run();
  b.request(3.99, 4.05, Outcome::grpc_unavailable, Connection::reused, "node-1", "web-0");
  record::RunRecord run = b.build();
  run.requests.back().h2 = facts(1, 5);
  run.requests.back().h2->grpc_message = "Cancelling all calls";
  run.requests.back().h2->goaway =
      record::GoawayRecord{at(4.05), 5, kInternalError, "Cancelling all calls"};
  Diagnosis d = diagnose(run, Options{});
  ASSERT_EQ(d.failures.size(), 1u);
  EXPECT_EQ(d.failures[0].hole, Hole::no_drain);
  EXPECT_EQ(d.failures[0].reason,
            "pod web-0 cut its drain short: GOAWAY(5, INTERNAL_ERROR \"Cancelling all calls\") "
            "at 4.05 s, this RPC answered grpc_unavailable \"Cancelling all calls\"");
  ASSERT_EQ(d.holes.size(), 1u);
  bool python = false;
  for (const std::string& step : d.holes[0].fix.steps) {
    python = python || step.find("Python: server.stop(grace).wait()") != std::string::npos;
  }
  EXPECT_TRUE(python) << "no per-language step in the no-drain fix";
}

TEST(DiagnoseH2, AnRpcAcceptedThenCancelledIsNoDrain) {
  RunBuilder b = grpc_run();
  b.request(4.001, 4.003, Outcome::grpc_cancelled, Connection::reused, "node-1", "web-0");
  record::RunRecord run = b.build();
  run.requests.back().h2 = facts(1, 7);
  run.requests.back().h2->goaway = record::GoawayRecord{at(4.002), 7, 0, ""};
  Diagnosis d = diagnose(run, Options{});
  ASSERT_EQ(d.failures.size(), 1u);
  EXPECT_EQ(d.failures[0].hole, Hole::no_drain);
  EXPECT_NE(d.failures[0].reason.find("gRPC's C core cancels RPCs that race its first GOAWAY"),
            std::string::npos)
      << d.failures[0].reason;
}

TEST(DiagnoseH2, AReconnectAfterTheGoawayIsTheDeregistrationRace) {
  RunBuilder b = grpc_run();
  b.request(4.02, 4.021, Outcome::reset_before_response, Connection::fresh, "node-1", "web-0");
  record::RunRecord run = b.build();
  run.requests.back().h2 = facts(9, 1);
  run.events.push_back(connection_event(4.01, EventKind::goaway_received, 1,
                                        record::GoawayRecord{at(4.01), 0x7fffffff, 0, ""}));
  Diagnosis d = diagnose(run, Options{});
  ASSERT_EQ(d.failures.size(), 1u);
  EXPECT_EQ(d.failures[0].hole, Hole::deregistration_race);
  EXPECT_EQ(d.failures[0].reason,
            "new connection after pod web-0's GOAWAY at 4.01 s (its clients reconnect at "
            "once), routed back to it before router node-1 applied its termination: its "
            "listener had already closed");
}

// A connection closed without GOAWAY: the RPC in flight is no-drain; one sent on it after the
// close (the client had not noticed) is keepalive-stale.
TEST(DiagnoseH2, AConnectionClosedWithoutGoaway) {
  RunBuilder b = grpc_run();
  b.request(4.02, 4.1, Outcome::closed_before_response, Connection::reused, "node-1", "web-0");
  b.fate(BackendFate::closed, 4.1);
  b.request(4.1001, 4.1002, Outcome::reset_before_response, Connection::reused, "node-1", "web-0");
  b.fate(BackendFate::reset, 4.1);
  record::RunRecord run = b.build();
  run.requests[run.requests.size() - 2].h2 = facts(1, 9);
  run.requests.back().h2 = facts(1, 11);
  run.events.push_back(connection_event(4.1, EventKind::connection_closed, 1, std::nullopt));
  run.events.back().connection->open_streams = 1;
  Diagnosis d = diagnose(run, Options{});
  ASSERT_EQ(d.failures.size(), 2u);
  EXPECT_EQ(d.failures[0].hole, Hole::no_drain);
  EXPECT_EQ(d.failures[0].reason,
            "in flight on an HTTP/2 connection that pod web-0 closed without GOAWAY at 4.10 s "
            "(closed_before_response)");
  EXPECT_EQ(d.failures[1].hole, Hole::keepalive_stale);
  ASSERT_EQ(d.notes.size(), 1u);
  EXPECT_EQ(d.notes[0].rfind("pod web-0 closed 1 HTTP/2 connection(s) without GOAWAY (1 "
                             "stream(s) open on them)",
                             0),
            0u)
      << d.notes[0];
}

// Nothing failed, yet the run shows two risks: a pod closed a connection without GOAWAY, and
// after the rollout one pod took most RPCs (connections stay where they reconnected).
// Through the l7 router over HTTP/2: the router answered UNAVAILABLE because the pod's
// connection to it ended under the RPC. Sent before the pod's stop: no-drain, in the router's
// words; sent after it, the state rules decide (here: before the router dropped the pod).
TEST(DiagnoseH2, AnRpcCutUnderTheL7RouterIsNoDrainInTheRoutersWords) {
  RunBuilder b = grpc_run();
  b.request(3.95, 4.1, Outcome::grpc_unavailable, Connection::reused, "node-1", "web-0");
  b.request(4.05, 4.1, Outcome::grpc_unavailable, Connection::reused, "node-1", "web-0");
  record::RunRecord run = b.build();
  for (record::RequestRecord& r : run.requests) {
    if (r.outcome == Outcome::grpc_unavailable) {
      r.h2 = facts(1, 9);
      r.h2->grpc_status = 14;
      r.router_error = "upstream_closed";
    }
  }
  Diagnosis d = diagnose(run, Options{});
  ASSERT_EQ(d.failures.size(), 2u);
  EXPECT_EQ(d.failures[0].hole, Hole::no_drain);
  EXPECT_EQ(d.failures[0].reason,
            "in flight at pod web-0 when its HTTP/2 connection to router node-1 ended without the "
            "RPC's answer (upstream_closed): the pod did not drain it (router node-1 answered "
            "grpc-status 14: upstream_closed)");
  EXPECT_EQ(d.failures[1].hole, Hole::deregistration_race) << d.failures[1].reason;
}

TEST(DiagnoseH2, NotesWhenNothingFailed) {
  RunBuilder b = grpc_run();
  b.ok(4.5, 6.5, 0.01, "node-1", "web-1").ok(4.5, 6.5, 0.5, "node-1", "web-2");
  b.pod("web-2", 3.0, 3.5);
  record::RunRecord run = b.build();
  for (record::RequestRecord& r : run.requests) {
    r.h2 = facts(1, 1);
  }
  run.events.push_back(connection_event(4.1, EventKind::connection_closed, 1, std::nullopt));
  Diagnosis d = diagnose(run, Options{});
  EXPECT_EQ(d.verdict, Verdict::pass);
  ASSERT_EQ(d.notes.size(), 2u);
  EXPECT_EQ(d.notes[1].rfind("post-rollout skew: pod web-1 took 98 % of the RPCs", 0), 0u)
      << d.notes[1];
}

TEST(DiagnoseH2, Http1RunsHaveNoNotesOrSteps) {
  RunBuilder b;
  b.set("replicas", "1").set("prestop", "none").set("grace", "30s");
  b.pod("web-0", 0.1, 0.5).applied(0.6, "node-1", "web-0", true, false);
  b.terminate("web-0", 4.0, 0.1);
  b.request(4.0, 4.1, Outcome::closed_before_response, Connection::reused, "node-1", "web-0");
  Diagnosis d = diagnose(b.build(), Options{});
  EXPECT_TRUE(d.notes.empty());
  ASSERT_EQ(d.holes.size(), 1u);
  for (const std::string& step : d.holes[0].fix.steps) {
    EXPECT_EQ(step.find("HTTP/2"), std::string::npos) << step;
  }
}

}  // namespace
}  // namespace zerodrop::diagnose
