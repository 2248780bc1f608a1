#include "http/router_log.h"

#include <random>
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "testing/mutate.h"

namespace zerodrop::http {
namespace {

using std::chrono::microseconds;
using std::chrono::milliseconds;

// Recorded from Debian's HAProxy 2.6.12 with kHaproxyLogFormat, one backend per misbehaving
// server: one that closes the connection on reading the request, one that answers a header line
// without a colon, one slower than `timeout server 300ms`, a closed port, a good one, and a
// backend without servers.
const std::vector<std::string> kHaproxyLines = {
    R"(1796598980.755 57638 502 b_close/pod-close SH Tt=16 rc=0 Tc=0 Tr=-1 "GET /close/x HTTP/1.1")",
    R"(1796598980.793 57650 502 b_bad/pod-bad PH Tt=3 rc=0 Tc=0 Tr=-1 "GET /bad/x HTTP/1.1")",
    R"(1796598980.803 57666 504 b_slow/pod-slow sH Tt=301 rc=0 Tc=0 Tr=-1 "GET /slow/x HTTP/1.1")",
    R"(1796598981.126 57680 503 b_refused/pod-refused SC Tt=0 rc=0 Tc=-1 Tr=-1 "GET /refused/x HTTP/1.1")",
    R"(1796598981.168 57692 200 b_ok/pod-ok -- Tt=0 rc=0 Tc=0 Tr=0 "GET /ok/x HTTP/1.1")",
    R"(1796598981.184 57708 503 b_none/<NOSRV> SC Tt=0 rc=0 Tc=-1 Tr=-1 "GET /none/x HTTP/1.1")",
};

// Recorded from Debian's nginx 1.22.1: a kept-alive client's request, then SIGHUP to the master;
// the old worker's shutdown closed the idle connection under the client's next request, of which
// the access log has no line.
const std::string kNginxAccess =
    R"(1796598985.888 51058 pid=9645 "GET /a HTTP/1.1" 200 up=- up_status=- connect=- )"
    R"(header=- pod=- error=-)";
const std::string kNginxShutdown =
    "2026/12/06 23:16:26 [notice] 9645#9645: gracefully shutting down";

TEST(RouterLog, HaproxyRecordedLines) {
  auto close = parse_haproxy_log_line(kHaproxyLines[0]);
  ASSERT_TRUE(close);
  EXPECT_EQ(close->accepted, std::chrono::seconds(1796598980) + milliseconds(755));
  EXPECT_EQ(close->client_port, 57638);
  EXPECT_EQ(close->status, 502);
  EXPECT_EQ(close->server, "b_close/pod-close");
  EXPECT_EQ(close->termination, "SH");
  EXPECT_EQ(close->total, milliseconds(16));
  std::vector<std::optional<ProxyFailure>> want = {ProxyFailure::upstream_reset,
                                                   ProxyFailure::bad_response,
                                                   ProxyFailure::upstream_timeout,
                                                   ProxyFailure::connect_refused,
                                                   std::nullopt,
                                                   ProxyFailure::no_endpoint};
  for (size_t i = 0; i < kHaproxyLines.size(); ++i) {
    auto line = parse_haproxy_log_line(kHaproxyLines[i]);
    ASSERT_TRUE(line) << kHaproxyLines[i];
    EXPECT_EQ(meaning_of(*line).failure, want[i]) << kHaproxyLines[i];
  }
}

// Not every 502 is upstream_reset: HAProxy's own rejection (PH) is bad_response, the router's.
TEST(RouterLog, TerminationStatesName) {
  EXPECT_EQ(termination_meaning("SH")->words,
            "the server aborted or refused while waiting for complete response headers from the "
            "server");
  EXPECT_EQ(termination_meaning("sC")->failure, ProxyFailure::connect_timeout);
  EXPECT_EQ(termination_meaning("SD")->failure, ProxyFailure::upstream_closed);
  EXPECT_EQ(termination_meaning("PH")->failure, ProxyFailure::bad_response);
  for (std::string_view own : {"PR", "LR", "RC", "IH", "DC", "KH", "CH", "cR", "sQ", "--"}) {
    ASSERT_TRUE(termination_meaning(own)) << own;
    EXPECT_FALSE(termination_meaning(own)->failure) << own;
  }
  for (std::string_view bad : {"", "S", "SHN-", "XH", "SX", "sh"}) {
    EXPECT_FALSE(termination_meaning(bad)) << bad;
  }
}

TEST(RouterLog, NginxRecordedLines) {
  auto access = parse_nginx_access_line(kNginxAccess);
  ASSERT_TRUE(access);
  EXPECT_EQ(access->logged, std::chrono::seconds(1796598985) + milliseconds(888));
  EXPECT_EQ(access->client_port, 51058);
  EXPECT_EQ(access->pid, 9645);
  EXPECT_EQ(access->status, 200);
  // nginx escapes a quote in the request line as \x22.
  auto quoted = parse_nginx_access_line(
      R"(1796598985.888 51058 pid=9645 "GET /\x22q HTTP/1.1" 502 up=1.2.3.4:80)");
  ASSERT_TRUE(quoted);
  EXPECT_EQ(quoted->status, 502);
  auto shutdown = parse_nginx_error_line(kNginxShutdown);
  ASSERT_TRUE(shutdown);
  EXPECT_EQ(shutdown->level, "notice");
  EXPECT_EQ(shutdown->pid, 9645);
  EXPECT_EQ(shutdown->message, kNginxShuttingDown);
}

TEST(RouterLog, RejectsOtherLines) {
  for (std::string_view line :
       {"", "[WARNING]  (9876) : Proxy f started.", "1796598980.755 57638 502",
        "1796598980.75 57638 502 b/s SH Tt=1", "1796598980.755 0 502 b/s SH Tt=1",
        "1796598980.755 57638 502 b-s SH Tt=1", "1796598980.755 57638 502 b/s SH Tx=1",
        "x1796598980.755 57638 502 b/s SH Tt=1"}) {
    EXPECT_FALSE(parse_haproxy_log_line(line)) << line;
  }
  for (std::string_view line : {"", "1796598985.888 51058 \"GET / HTTP/1.1\" 200",
                                "1796598985.888 51058 pid=9645 \"GET / HTTP/1.1 200",
                                "1796598985.888 51058 pid=x \"GET /\" 200"}) {
    EXPECT_FALSE(parse_nginx_access_line(line)) << line;
  }
  for (std::string_view line : {"", "2026/12/06 23:16:26 notice 9645#9645: x",
                                "2026/12/06 23:16:26 [notice] 9645: x", "nginx: [emerg] x"}) {
    EXPECT_FALSE(parse_nginx_error_line(line)) << line;
  }
}

// Robustness: random edits of the recorded lines and random bytes give a parsed line or nullopt,
// never a crash or an exception (run under ASan in CI), and both happen.
TEST(RouterLogFuzz, RandomMutationsNeverCrash) {
  std::vector<std::string> seeds = kHaproxyLines;
  seeds.push_back(kNginxAccess);
  seeds.push_back(kNginxShutdown);
  std::mt19937 random(20261206);  // fixed seed: a failure reproduces
  constexpr std::string_view alphabet = " .=/#:\"[]<>-0123456789TtSHCPsHpid\\x";
  int parsed = 0;
  int rejected = 0;
  for (int round = 0; round < 20000; ++round) {
    int edits = static_cast<int>(random() % 4);
    std::string text =
        testing::mutate(seeds[round % seeds.size()], edits, random, {alphabet, 12, 30});
    bool any = false;
    ASSERT_NO_THROW({
      auto h = parse_haproxy_log_line(text);
      if (h) {
        (void)meaning_of(*h);
        EXPECT_TRUE(termination_meaning(h->termination)) << text;
      }
      any = h || parse_nginx_access_line(text) || parse_nginx_error_line(text);
    }) << text;
    ++(any ? parsed : rejected);
  }
  EXPECT_GT(parsed, 0);
  EXPECT_GT(rejected, 0);
}

}  // namespace
}  // namespace zerodrop::http
