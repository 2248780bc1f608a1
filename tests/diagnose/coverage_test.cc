// What a verdict covered: each termination's windows, the traffic in them, the chance of a miss;
// and the failures a retrying client would have seen.
#include <cmath>

#include <gtest/gtest.h>

#include "diagnose/diagnose.h"
#include "diagnose/run_builder.h"

namespace zerodrop::diagnose {
namespace {

using testing::Connection;
using testing::EventKind;
using testing::Outcome;
using testing::RunBuilder;

// web-0 and web-1 serve through node-1 and node-2 from 0.5 s: a request every 0.1 s each on a
// kept-alive connection, and to web-0 a new connection every 0.5 s from 1.0 s until 4 s (6 in
// 3 s: 2/s). web-0 gets SIGTERM at its deletion at 4 s and exits 3 ms later; the routers update
// at 5.0 s and 5.5 s.
RunBuilder fast_stop() {
  RunBuilder b;
  b.set("replicas", "2").set("prestop", "none").set("grace", "30s");
  b.serving({"web-0", "web-1"}, {"node-1", "node-2"});
  b.ok(1.0, 3.95, 0.1, "node-1", "web-0").ok(1.0, 8.0, 0.1, "node-2", "web-1");
  for (double t = 1.0; t < 4.0; t += 0.5) {
    b.request(t + 0.05, t + 0.055, Outcome::ok, Connection::fresh, "node-2", "web-0");
  }
  b.event(2.0, EventKind::rollout_started, "");
  b.request(3.999, 4.002, Outcome::ok, Connection::reused, "node-1", "web-0");  // at the signal
  b.request(4.001, 4.0025, Outcome::ok, Connection::reused, "node-1", "web-0");
  b.terminate("web-0", 4.0, 0.003);
  b.applied(5.0, "node-1", "web-0", false, true).applied(5.5, "node-2", "web-0", false, true);
  return b;
}

TEST(Coverage, CountsEachWindowsTrafficAndTheChanceOfAMiss) {
  Diagnosis d = diagnose(fast_stop().build(), Options{});
  ASSERT_EQ(d.coverage.pods.size(), 1u);
  const PodCoverage& p = d.coverage.pods[0];
  EXPECT_EQ(p.pod, "web-0");
  EXPECT_EQ(p.stop_window(), testing::at(0.003));
  ASSERT_TRUE(p.deregistered);
  EXPECT_EQ(*p.deregistered, testing::at(5.5));
  EXPECT_EQ(p.race_window(), testing::at(1.5));
  EXPECT_EQ(p.in_flight_at_signal, 1u);
  EXPECT_EQ(p.stop_requests, 1u);
  EXPECT_EQ(p.stop_fresh, 0u);
  EXPECT_EQ(p.race_fresh, 0u);
  // 6 new connections from its first request (1.0 s) to its deletion (4.0 s).
  EXPECT_NEAR(p.fresh_rate, 2.0, 1e-9);
  EXPECT_NEAR(p.race_miss(), std::exp(-3.0), 1e-9);
  EXPECT_NEAR(d.coverage.race_miss, std::exp(-3.0), 1e-9);
  EXPECT_EQ(d.verdict, Verdict::pass);
  EXPECT_NE(d.conclusion.find("covered: 1 termination, stop windows (signal → exit) 3.0 ms: 1 "
                              "request in flight at the signals and 1 sent within the windows; "
                              "0 new connections reached a pod after its stop signal"),
            std::string::npos)
      << d.conclusion;
  EXPECT_NE(d.conclusion.find("probability 0.05"), std::string::npos) << d.conclusion;
  EXPECT_EQ(d.conclusion.find("covered little"), std::string::npos) << d.conclusion;
}

// Keep-alive only: no new connection reached any pod, so a pod refusing them after its signal
// would have passed too. The verdict says so.
TEST(Coverage, APassWithNoNewConnectionsSaysItCoveredLittle) {
  record::RunRecord run = fast_stop().build();
  for (record::RequestRecord& r : run.requests) {
    r.connection = record::Connection::reused;
  }
  Diagnosis d = diagnose(run, Options{});
  EXPECT_EQ(d.coverage.pods[0].fresh_rate, 0);
  EXPECT_EQ(d.coverage.race_miss, 1.0);
  EXPECT_NE(d.conclusion.find("a pass that covered little: a pod refusing new connections after "
                              "its stop signal would have shown no failure with probability "
                              "1.00"),
            std::string::npos)
      << d.conclusion;
}

// Deregistered by every router before its signal (a preStop sleep longer than the propagation):
// no new connection could reach it stopping, which is certain, not a chance.
TEST(Coverage, DeregisteredBeforeTheSignalLeavesNoRaceWindow) {
  RunBuilder b;
  b.set("replicas", "1").set("prestop", "sleep:2s").set("grace", "30s");
  b.pod("web-0", 0.1, 0.5).applied(0.6, "node-1", "web-0", true, false);
  b.ok(1.0, 3.0, 0.1, "node-1", "web-0");
  b.event(2.0, EventKind::deletion_started, "web-0");
  b.applied(2.5, "node-1", "web-0", false, true);
  b.signal(4.0, "web-0", SIGTERM).exited(4.01, "web-0", 0);
  Diagnosis d = diagnose(b.build(), Options{});
  ASSERT_EQ(d.coverage.pods.size(), 1u);
  EXPECT_EQ(d.coverage.pods[0].race_window(), record::Micros{0});
  EXPECT_NE(d.conclusion.find("the deregistration race could not occur"), std::string::npos)
      << d.conclusion;
  // No request reached it stopping either: a missing drain could not show.
  EXPECT_NE(d.conclusion.find("no request was at a stopping pod"), std::string::npos)
      << d.conclusion;
}

TEST(Coverage, AnEndOfRunKillIsNoTermination) {
  RunBuilder b;
  b.pod("web-0", 0.1, 0.5).applied(0.6, "node-1", "web-0", true, false);
  b.ok(1.0, 2.0, 0.1, "node-1", "web-0");
  b.signal(3.0, "web-0", SIGKILL);
  record::RunRecord run = b.build();
  run.events.back().detail = std::string(record::kEndOfRunKill);
  record::Event exited{.t = testing::at(3.0), .kind = EventKind::pod_exited, .pod = "web-0"};
  exited.signal = SIGKILL;
  run.events.push_back(exited);
  Diagnosis d = diagnose(run, Options{});
  EXPECT_TRUE(d.coverage.pods.empty());
  EXPECT_EQ(d.conclusion, "no request failed (10 requests)");
}

// Failures a client resends (idempotent, reused connection, no byte) are counted beside the raw
// failures, and the verdict still fails on the raw count.
TEST(Retries, TheVerdictShowsRawAndAfterRetriesAndFailsOnRaw) {
  RunBuilder b = fast_stop();
  b.request(6.0, 6.001, Outcome::closed_before_response, Connection::reused, "node-2", "web-1");
  b.request(6.2, 6.201, Outcome::reset_before_response, Connection::fresh, "node-2", "web-1");
  record::RunRecord run = b.build();
  run.requests[run.requests.size() - 2].retry_safe = true;
  Diagnosis d = diagnose(run, Options{});
  EXPECT_EQ(d.verdict, Verdict::fail);
  EXPECT_EQ(d.totals.failed, 2u);
  EXPECT_EQ(d.totals.retry_safe, 1u);
  EXPECT_FALSE(d.totals.client_retry);
  EXPECT_EQ(d.totals.failed_after_retries(), 1u);
  EXPECT_NE(d.conclusion.find("2 of "), std::string::npos) << d.conclusion;
  EXPECT_NE(d.conclusion.find("; 1 retry-safe: a client that resends them would have seen 1 if "
                              "each resend succeeded"),
            std::string::npos)
      << d.conclusion;

  // The same failure resent by --client-retry and answered: 1 raw failure left after retries.
  record::RequestRecord resend = run.requests[run.requests.size() - 2];
  run.requests[run.requests.size() - 2].resent = true;
  resend.attempt = 2;
  resend.outcome = Outcome::ok;
  resend.failed = false;
  resend.retry_safe = false;
  resend.connection = record::Connection::fresh;
  run.requests.push_back(resend);
  d = diagnose(run, Options{});
  EXPECT_EQ(d.verdict, Verdict::fail);
  EXPECT_TRUE(d.totals.client_retry);
  EXPECT_EQ(d.totals.resent, 1u);
  EXPECT_EQ(d.totals.failed_after_retries(), 1u);
  EXPECT_NE(d.conclusion.find("; 1 after client retries (1 retry-safe failures resent)"),
            std::string::npos)
      << d.conclusion;
}

}  // namespace
}  // namespace zerodrop::diagnose
