// HTTP/2 and gRPC clients through kube-proxy (docs/sim.md, "HTTP/2 and gRPC"): connections
// pinned until the server's GOAWAY or close, every client of a pod reconnecting at once. The
// lab's fixed propagation makes each router's view a step function, so the expected counts
// below follow in closed form.
#include <gtest/gtest.h>

#include "base/error.h"
#include "one_node.h"
#include "sim/simulator.h"

namespace zerodrop::sim {
namespace {

using record::Hole;

double expected(const Result& r, Hole h) {
  return r.expected[static_cast<size_t>(h)];
}

// One router that learns of every change exactly 2 s after it, 200 requests/s, gRPC clients
// that open no connection but to replace one (no maximum age), an app that closes its listener
// and sends GOAWAY at SIGTERM (no preStop), readiness probed every 10 s so that the second old
// pod goes long after the first one's storm.
Options storm(Protocol protocol) {
  Options o = one_node(2, 2, 200, 0, 1);
  o.readiness_period = 10;
  o.app = App::close_listener;
  o.protocol = protocol;
  o.connection_max_age = 0;
  o.connection_rate = 10;
  o.request_duration = Distribution::fixed(0.01);
  o.drain = Distribution::fixed(0.1);
  return o;
}

// The first old pod's GOAWAY unpins half the traffic (10 of the 20 connections) while the
// router's view holds it and the other old pod for 2 s: f = 1/2. An
// HTTP/2 client tries at each request (m = 20 tries in 2 s): f(1 - f^m)/(1 - f) ~ 1 failure per
// connection, 10. A gRPC channel tries once a second (m = 2): 0.75 failed tries, each failing
// 10 RPCs of the 1 s backoff: 75. The second old pod's GOAWAY comes when the router knows only
// it (the new pod's Ready lands 2 s after it, 0.2 ms before the deletion's): f = 1, all its
// traffic (now every connection) fails for 2 s whatever the client: 400.
TEST(H2, TheGoawayStormFailsReconnectsWhileTheRouterStillChoosesThePod) {
  double h2 = expected(simulate(storm(Protocol::h2)), Hole::deregistration_race);
  double grpc = expected(simulate(storm(Protocol::grpc)), Hole::deregistration_race);
  EXPECT_NEAR(h2, 10 + 400, 1.0);
  EXPECT_NEAR(grpc, 75 + 400, 1.0);
}

// With a preStop longer than the propagation the routers have dropped the pod before its GOAWAY:
// every reconnect lands on a live pod, and a graceful GOAWAY lets the streams in flight finish.
TEST(H2, GracefulGoawayAfterAPreStopLongerThanPropagationDropsNothing) {
  Options o = storm(Protocol::grpc);
  o.prestop = 3;
  Result r = simulate(o);
  EXPECT_EQ(r.failed, 0u);
  EXPECT_LT(r.expected[static_cast<size_t>(Hole::deregistration_race)], 1e-9);
  EXPECT_LT(r.expected[static_cast<size_t>(Hole::no_drain)], 1e-9);
}

// An abrupt GOAWAY (Shutdown(now)) cancels every stream in flight on the pod's connections: all
// of the router's traffic was pinned to the two old pods (1/2 each, no new connection before
// the stop), so each cancels 200 x 1/2 x 0.5 s = 50 RPCs, 100 in all; graceful, none.
TEST(H2, AbruptGoawayCancelsTheStreamsInFlight) {
  Options o = storm(Protocol::grpc);
  o.prestop = 3;
  o.request_duration = Distribution::fixed(0.5);
  o.goaway = Goaway::abrupt;
  EXPECT_NEAR(expected(simulate(o), Hole::no_drain), 100, 1e-6);
  o.goaway = Goaway::graceful;
  EXPECT_LT(expected(simulate(o), Hole::no_drain), 1e-9);
}

// A pod that exits without GOAWAY (naive) fails its streams in flight as well.
TEST(H2, ExitWithoutGoawayCutsTheStreamsInFlight) {
  Options o = storm(Protocol::h2);
  o.prestop = 3;
  o.request_duration = Distribution::fixed(0.5);
  o.app = App::naive;
  EXPECT_NEAR(expected(simulate(o), Hole::no_drain), 100, 1e-6);
}

TEST(H2, RejectsHttp2WithoutKeepalive) {
  Options o = storm(Protocol::h2);
  o.keepalive = Keepalive::off;
  EXPECT_THROW(simulate(o), Error);
}

}  // namespace
}  // namespace zerodrop::sim
