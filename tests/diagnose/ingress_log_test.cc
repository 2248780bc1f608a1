// A real ingress's faults named from its own log lines (ingress_rules.h): misbehaving routers,
// each fault with lines recorded from Debian's HAProxy 2.6 and nginx 1.22.
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

// Two pods serving through node-1 since 0.5 s; a rollout starts at 2 s.
RunBuilder serving() {
  RunBuilder b;
  b.set("replicas", "2").set("prestop", "none").set("grace", "30s");
  b.serving({"web-0", "web-1"}, {"node-1"});
  b.ok(1.0, 6.0, 0.1, "node-1", "web-1");
  b.event(2.0, EventKind::rollout_started, "");
  return b;
}

// A router-log note of node-1 at `t` quoting `line` of `file`.
void log_line(RunBuilder& b, double t, const std::string& file, const std::string& line) {
  b.event(t, EventKind::note, "", "node-1");
  b.events().back().detail = std::string(record::kRouterLog) + " " + file + ": " + line;
}

// A failure through node-1 from client port `port`, with what the router said of it.
void failure(RunBuilder& b, double sent, Outcome outcome, Connection connection, uint16_t port,
             int status, const std::string& router_error, const std::string& backend) {
  b.request(sent, sent + 0.003, outcome, connection, "node-1", backend);
  b.last_request().local_port = port;
  b.last_request().status = status;
  b.last_request().router_error = router_error;
}

TEST(IngressLog, HaproxysRejectionOfAResponseIsTheRoutersNotAReset) {
  // HAProxy answered 502 itself while web-0 was serving; its header says upstream_reset, as for
  // every 502, but its log says PH: it blocked the server's response (a header line without a
  // colon). The router's failure, not the app's.
  RunBuilder b = serving();
  failure(b, 3.0, Outcome::http_502, Connection::reused, 57650, 502, "upstream_reset", "web-0");
  log_line(b, 3.003, "haproxy.log",
           R"(1796598980.793 57650 502 pods/web-0 PH Tt=3 rc=0 Tc=0 Tr=-1 "GET / HTTP/1.1")");
  Diagnosis d = diagnose(b.build(), Options{});
  ASSERT_EQ(d.failures.size(), 1u);
  EXPECT_EQ(d.failures[0].hole, Hole::unexplained);
  EXPECT_EQ(d.failures[0].reason,
            "router node-1 answered 502 itself (bad_response): it could not parse the response of "
            "pod web-0; the router failed, not the app; its log's termination state PH (HAProxy "
            "aborted it itself (a limit, a deny rule, or a server response it blocked) while "
            "waiting for complete response headers from the server, not upstream_reset as its "
            "header said): haproxy.log «1796598980.793 57650 502 pods/web-0 PH Tt=3 rc=0 Tc=0 "
            "Tr=-1 \"GET / HTTP/1.1\"»");
}

TEST(IngressLog, AServerResetStaysTheAppsHoleWithTheLineQuoted) {
  // web-0 exits with the request in flight: SH, the server aborted before the headers.
  RunBuilder b = serving();
  b.terminate("web-0", 3.0, 0.01).applied(3.5, "node-1", "web-0", false, true);
  failure(b, 3.005, Outcome::http_502, Connection::reused, 57638, 502, "upstream_reset", "web-0");
  log_line(b, 3.009, "haproxy.log",
           R"(1796598980.755 57638 502 pods/web-0 SH Tt=4 rc=0 Tc=0 Tr=-1 "GET / HTTP/1.1")");
  Diagnosis d = diagnose(b.build(), Options{});
  ASSERT_EQ(d.failures.size(), 1u);
  EXPECT_EQ(d.failures[0].hole, Hole::no_drain);
  EXPECT_TRUE(d.failures[0].reason.ends_with(
      "(router node-1 answered 502: upstream_reset); its log's termination state SH (the server "
      "aborted or refused while waiting for complete response headers from the server): "
      "haproxy.log «1796598980.755 57638 502 pods/web-0 SH Tt=4 rc=0 Tc=0 Tr=-1 \"GET / "
      "HTTP/1.1\"»"))
      << d.failures[0].reason;
}

TEST(IngressLog, HaproxysOwnStatesAndTimeoutsAreReadBack) {
  RunBuilder b = serving();
  // A 503 HAProxy's header calls connect_refused, which its log says timed out (sC); a 503 of a
  // resource HAProxy ran out of (RC); a 503 whose line is another client port's: unchanged.
  failure(b, 3.0, Outcome::http_503, Connection::fresh, 40001, 503, "connect_refused", "web-0");
  log_line(b, 3.002, "haproxy.log",
           R"(1796598981.126 40001 503 pods/web-0 sC Tt=1000 rc=0 Tc=-1 Tr=-1 "GET / HTTP/1.1")");
  failure(b, 3.5, Outcome::http_503, Connection::fresh, 40002, 503, "connect_refused", "web-0");
  log_line(b, 3.502, "haproxy.log",
           R"(1796598981.626 40002 503 pods/web-0 RC Tt=0 rc=0 Tc=-1 Tr=-1 "GET / HTTP/1.1")");
  failure(b, 4.0, Outcome::http_503, Connection::fresh, 40003, 503, "connect_refused", "web-0");
  log_line(b, 4.002, "haproxy.log",
           R"(1796598982.126 40999 503 pods/web-0 SC Tt=0 rc=0 Tc=-1 Tr=-1 "GET / HTTP/1.1")");
  Diagnosis d = diagnose(b.build(), Options{});
  ASSERT_EQ(d.failures.size(), 3u);
  EXPECT_NE(d.failures[0].reason.find("answered 503: connect_timeout); its log's termination "
                                      "state sC (the server-side timeout expired while "
                                      "connecting to the server, not connect_refused"),
            std::string::npos)
      << d.failures[0].reason;
  EXPECT_EQ(d.failures[1].hole, Hole::unexplained);
  EXPECT_NE(d.failures[1].reason.find("answered 503 itself (haproxy_RC): it failed"),
            std::string::npos)
      << d.failures[1].reason;
  EXPECT_EQ(d.failures[2].reason.find("haproxy.log"), std::string::npos) << d.failures[2].reason;
}

// nginx's lines of a kept-alive connection's last request (port 51058, worker 9645) at 3.0 s and
// of that worker's shutdown at `reload` s (worker `pid`'s), then a request cut at 3.25 s.
RunBuilder reload_cut(double reload, const std::string& pid = "9645") {
  RunBuilder b = serving();
  log_line(b, 3.0, "access.log",
           R"(1796598985.888 51058 pid=9645 "GET / HTTP/1.1" 200 up=127.0.0.2:8080 )"
           R"(up_status=200 connect=0.000 header=0.001 pod=web-1 error=)");
  log_line(b, reload, "error.log",
           "2026/12/06 23:16:26 [notice] " + pid + "#" + pid + ": gracefully shutting down");
  failure(b, 3.25, Outcome::closed_before_response, Connection::reused, 51058, 0, "", "");
  return b;
}

TEST(IngressLog, AnNginxReloadCuttingAKeptAliveConnectionIsNamed) {
  Diagnosis d = diagnose(reload_cut(3.2).build(), Options{});
  ASSERT_EQ(d.failures.size(), 1u);
  EXPECT_EQ(d.failures[0].hole, Hole::ingress_reload_reset);
  EXPECT_EQ(d.failures[0].reason,
            "closed_before_response on a kept-alive client connection (port 51058) of router "
            "node-1: nginx worker 9645 had served its last request there, ended at 3.00 s "
            "(access.log "
            "«1796598985.888 51058 pid=9645 \"GET / HTTP/1.1\" 200 up=127.0.0.2:8080 "
            "up_status=200 connect=0.000 header=0.001 pod=web-1 error=»); a reload retired that "
            "worker, which the lab saw shut down at 3.20 s, 50.0 ms before this request was sent "
            "(error.log «2026/12/06 23:16:26 [notice] 9645#9645: gracefully shutting down»): it "
            "closes its idle connections, and the request met the closed connection before any "
            "response; nginx's failure, not the app's, and safe to resend");
  ASSERT_EQ(d.holes.size(), 1u);
  EXPECT_NE(d.holes[0].evidence.find("1 request cut by nginx reloads of node-1"), std::string::npos)
      << d.holes[0].evidence;
  EXPECT_NE(d.holes[0].fix.summary.find("without reloading the ingress"), std::string::npos);
  EXPECT_TRUE(d.rollout_related);
}

TEST(IngressLog, AShutdownSeenLateCountsFromItsPollBefore) {
  // On a busy machine the poll that saw worker 9645 shut down came 150 ms after the request was
  // sent; the poll before it saw it running at 3.24 s: the shutdown may precede the send.
  RunBuilder late = reload_cut(3.4);
  record::RunRecord run = late.build();
  EXPECT_EQ(diagnose(run, Options{}).failures[0].hole, Hole::unexplained) << "no interval";
  for (record::Event& e : run.events) {
    if (e.detail.find("gracefully shutting down") != std::string::npos) {
      e.t_min = at(3.24);
    }
  }
  Diagnosis d = diagnose(run, Options{});
  EXPECT_EQ(d.failures[0].hole, Hole::ingress_reload_reset);
  EXPECT_NE(d.failures[0].reason.find("which the lab saw shut down at 3.40 s, 0.15 s after this "
                                      "request was sent (running at its poll before, 3.24 s)"),
            std::string::npos)
      << d.failures[0].reason;
}

TEST(IngressLog, WithoutTheWholeChainNoReloadIsBlamed) {
  // Another worker retired; the worker shut down before the connection's last request.
  for (RunBuilder b : {reload_cut(3.2, "9700"), reload_cut(2.5)}) {
    Diagnosis d = diagnose(b.build(), Options{});
    ASSERT_EQ(d.failures.size(), 1u);
    EXPECT_EQ(d.failures[0].hole, Hole::unexplained) << d.failures[0].reason;
  }
  // The same lines, but a new connection, or a pod named: not a cut of an idle connection.
  record::RunRecord run = reload_cut(3.2).build();
  run.requests.back().connection = Connection::fresh;
  EXPECT_NE(diagnose(run, Options{}).failures[0].hole, Hole::ingress_reload_reset);
  run.requests.back().connection = Connection::reused;
  run.requests.back().backend = "web-1";
  EXPECT_NE(diagnose(run, Options{}).failures[0].hole, Hole::ingress_reload_reset);
}

}  // namespace
}  // namespace zerodrop::diagnose
