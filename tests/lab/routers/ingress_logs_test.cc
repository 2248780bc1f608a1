#include "lab/routers/ingress_logs.h"

#include <sstream>

#include <gtest/gtest.h>

namespace zerodrop::lab {
namespace {

using record::Connection;
using record::Micros;
using record::Outcome;

// The run's t = 0 is 1796598980.000 on the Unix clock of these recorded lines.
constexpr std::chrono::microseconds kOrigin = std::chrono::seconds(1796598980);

Micros ms(int64_t n) {
  return std::chrono::milliseconds(n);
}

// Recorded from HAProxy 2.6 (kHaproxyLogFormat): a reset (SH) and a rejected response (PH) ending
// at 771 and 796 ms, a success, and a warning of HAProxy's own.
const char* const kHaproxyLog =
    "[WARNING]  (9876) : config : missing timeouts for frontend 'f'.\n"
    "1796598980.755 57638 502 pods/pod-1 SH Tt=16 rc=0 Tc=0 Tr=-1 \"GET / HTTP/1.1\"\n"
    "1796598980.793 57650 502 pods/pod-2 PH Tt=3 rc=0 Tc=0 Tr=-1 \"GET / HTTP/1.1\"\n"
    "1796598980.800 57650 200 pods/pod-2 -- Tt=1 rc=0 Tc=0 Tr=1 \"GET / HTTP/1.1\"\n";

IngressFailure answered(uint16_t port, int64_t done_ms, int status) {
  IngressFailure f;
  f.client_port = port;
  f.sent = ms(done_ms - 10);
  f.done = ms(done_ms);
  f.status = status;
  f.outcome = status == 502 ? Outcome::http_502 : Outcome::http_503;
  f.connection = Connection::reused;
  f.router_answered = true;
  f.pod_named = true;
  return f;
}

TEST(HaproxyNotes, QuoteTheLineOfEachResponseHaproxyMade) {
  std::istringstream log(kHaproxyLog);
  IngressFailure relayed = answered(57650, 797, 502);
  relayed.router_answered = false;  // the pod's own 502: HAProxy's line says nothing new
  std::vector<RouterLogNote> notes =
      haproxy_notes(log,
                    {answered(57650, 797, 502), answered(57638, 772, 502), relayed,
                     answered(57638, 2772, 502), answered(57638, 772, 503)},
                    kOrigin);
  ASSERT_EQ(notes.size(), 2u);  // a second later, or another status: no line of theirs
  EXPECT_EQ(notes[0], (RouterLogNote{ms(771),
                                     "router log haproxy.log: 1796598980.755 57638 502 "
                                     "pods/pod-1 SH Tt=16 rc=0 Tc=0 Tr=-1 \"GET / "
                                     "HTTP/1.1\""}));
  EXPECT_EQ(notes[1].t, ms(796));
  EXPECT_NE(notes[1].detail.find(" PH "), std::string::npos);
}

// Recorded from nginx 1.22: a kept-alive connection's request served by worker 9645, then a
// reload, then the worker's shutdown line.
const char* const kAccess =
    "1796598980.500 51058 pid=9645 \"GET / HTTP/1.1\" 200 up=127.0.0.2:8080 up_status=200 "
    "connect=0.000 header=0.001 pod=pod-1 error=\n"
    "1796598985.888 51058 pid=9645 \"GET / HTTP/1.1\" 200 up=127.0.0.2:8080 up_status=200 "
    "connect=0.000 header=0.001 pod=pod-1 error=\n"
    "1796598985.900 51060 pid=9645 \"GET / HTTP/1.1\" 200 up=127.0.0.2:8080 up_status=200 "
    "connect=0.000 header=0.001 pod=pod-1 error=\n";
const char* const kError =
    "2026/12/06 23:16:25 [notice] 9643#9643: signal 1 (SIGHUP) received from 9649, reconfiguring\n"
    "2026/12/06 23:16:25 [notice] 9643#9643: start worker process 9692\n"
    "2026/12/06 23:16:26 [notice] 9645#9645: gracefully shutting down\n"
    "2026/12/06 23:16:26 [notice] 9645#9645: exiting\n";

IngressFailure cut(uint16_t port, int64_t sent_ms) {
  IngressFailure f;
  f.client_port = port;
  f.sent = ms(sent_ms);
  f.done = ms(sent_ms + 2);
  f.outcome = Outcome::closed_before_response;
  f.connection = Connection::reused;
  return f;
}

TEST(NginxNotes, QuoteTheConnectionsLastRequestAndTheReloadThatRetiredItsWorker) {
  std::istringstream access(kAccess);
  std::istringstream error(kError);
  IngressFailure fresh = cut(51058, 6200);
  fresh.connection = Connection::fresh;
  std::vector<RouterLogNote> notes =
      nginx_notes(access, error, {{9645, ms(5990), ms(6000)}, {9692, ms(8990), ms(9000)}},
                  {cut(51058, 6200), cut(51058, 6300), fresh, cut(40000, 6200)}, kOrigin);
  // Once each, however many failures they explain; the worker retired at 9 s is another.
  ASSERT_EQ(notes.size(), 2u);
  EXPECT_EQ(notes[0].t, ms(5888));
  EXPECT_TRUE(notes[0].detail.starts_with("router log access.log: 1796598985.888 51058 pid=9645"))
      << notes[0].detail;
  EXPECT_EQ(notes[1], (RouterLogNote{ms(6000),
                                     "router log error.log: 2026/12/06 23:16:26 [notice] "
                                     "9645#9645: gracefully shutting down",
                                     ms(5990)}));
}

TEST(NginxNotes, AWorkerRetiredBeforeTheLastRequestIsNotItsCut) {
  std::istringstream access(kAccess);
  std::istringstream error(kError);
  std::vector<RouterLogNote> notes =
      nginx_notes(access, error, {{9645, ms(4990), ms(5000)}}, {cut(51058, 6200)}, kOrigin);
  ASSERT_EQ(notes.size(), 1u);  // the access line only
  EXPECT_TRUE(notes[0].detail.starts_with("router log access.log: "));
}

}  // namespace
}  // namespace zerodrop::lab
