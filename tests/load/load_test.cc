// The engine against a server that misbehaves on purpose: every behaviour lands in its class.
#include "load/load.h"

#include <algorithm>
#include <mutex>
#include <set>
#include <thread>

#include <fmt/format.h>
#include <gtest/gtest.h>

#include "base/error.h"
#include "testing/misbehaving_server.h"

namespace zerodrop::load {
namespace {

using namespace std::chrono_literals;
using record::Outcome;
using testing::Behaviour;
using testing::MisbehavingServer;
using testing::ServerOptions;

struct Result {
  Summary summary;
  std::vector<record::RequestRecord> records;
};

// Every misbehaviour but a stall answers at once: the timeouts are generous so that a loaded
// machine, which can hold a thread off the CPU for hundreds of milliseconds, does not turn an
// answer into a timeout (the tests of timeouts set short ones).
Options quick(const std::string& url) {
  Options o;
  o.targets = {{"GET", url}};
  o.rate = 40;
  o.duration = 250ms;
  o.connections = 4;
  o.timeout = 5s;
  o.connect_timeout = 5s;
  return o;
}

Result run_collecting(const Options& options, const std::atomic<bool>* stop = nullptr) {
  Result result;
  Hooks hooks;
  hooks.on_record = [&](const record::RequestRecord& r) {
    result.records.push_back(r);
  };
  hooks.stop = stop;
  result.summary = run(options, hooks);
  return result;
}

Result run_against(Behaviour behaviour, int status = 200, Duration timeout = 5s) {
  ServerOptions server_options;
  server_options.behaviour = behaviour;
  server_options.status = status;
  server_options.delay = 30ms;
  MisbehavingServer server(server_options);
  Options o = quick(server.url());
  o.timeout = timeout;
  return run_collecting(o);
}

// "timeout 3 (no complete response within the timeout), ok 2": every class of the run, with the
// first error of each, for a failure message.
std::string classes_seen(const Result& r) {
  std::string out;
  for (size_t i = 0; i < record::kOutcomeCount; ++i) {
    uint64_t n = r.summary.outcomes[i];
    if (n == 0) {
      continue;
    }
    auto first = std::find_if(r.records.begin(), r.records.end(), [&](const auto& rec) {
      return static_cast<size_t>(rec.outcome) == i;
    });
    out += fmt::format("{}{} {} ({})", out.empty() ? "" : ", ",
                       record::to_string(static_cast<Outcome>(i)), n,
                       first == r.records.end() ? "" : first->error);
  }
  return out;
}

// Every request of the run has the one expected class and is counted as a failure.
void expect_all(const Result& r, Outcome outcome) {
  ASSERT_GT(r.summary.requests, 0u);
  EXPECT_EQ(r.summary.outcomes[static_cast<size_t>(outcome)], r.summary.requests)
      << "expected every request to be " << record::to_string(outcome) << "; seen "
      << classes_seen(r);
  EXPECT_EQ(r.summary.failed, outcome == Outcome::ok ? 0 : r.summary.requests);
  EXPECT_EQ(r.records.size(), r.summary.requests);
}

TEST(Load, HealthyServerIsAllOkWithReusedConnections) {
  Result r = run_against(Behaviour::ok);
  expect_all(r, Outcome::ok);
  std::set<uint64_t> seqs;
  for (const auto& rec : r.records) {
    EXPECT_EQ(rec.status, 200);
    EXPECT_EQ(rec.backend, "pod-0");
    EXPECT_NE(rec.local_port, 0);
    EXPECT_TRUE(rec.sent && rec.first_byte);
    EXPECT_LE(rec.intended, *rec.sent);
    EXPECT_LE(*rec.first_byte, rec.done);
    seqs.insert(rec.seq);
  }
  EXPECT_EQ(seqs.size(), r.records.size()) << "sequence numbers are unique";
  EXPECT_EQ(r.records.front().connection, record::Connection::fresh);
  EXPECT_EQ(r.records.back().connection, record::Connection::reused);
  EXPECT_LT(r.summary.connections_opened, r.summary.requests);
  EXPECT_EQ(r.summary.disruption_s, 0);
}

TEST(Load, RefusedConnections) {
  Result r = run_against(Behaviour::refuse);
  expect_all(r, Outcome::connect_refused);
  EXPECT_FALSE(r.records.front().sent) << "a refused request was never sent";
  EXPECT_GT(r.summary.disruption_s, 0.1);
  // Every request failed: the failures span the run, and the longest stretch lies within it.
  EXPECT_EQ(r.summary.first_failure_s, 0);
  EXPECT_GE(r.summary.last_failure_s, r.summary.disruption_start_s + r.summary.disruption_s);
  EXPECT_EQ(r.summary.disruption_start_s, 0);
}

TEST(Load, ResetBeforeResponse) {
  expect_all(run_against(Behaviour::reset), Outcome::reset_before_response);
}

TEST(Load, ClosedBeforeResponse) {
  expect_all(run_against(Behaviour::close), Outcome::closed_before_response);
}

TEST(Load, ResetDuringResponse) {
  expect_all(run_against(Behaviour::reset_mid_body), Outcome::reset_during_response);
}

TEST(Load, TruncatedResponse) {
  expect_all(run_against(Behaviour::truncated), Outcome::truncated_response);
}

TEST(Load, StalledServerTimesOut) {
  Result r = run_against(Behaviour::stall, 200, 300ms);
  expect_all(r, Outcome::timeout);
  EXPECT_GE(r.records.front().done - *r.records.front().sent, record::Micros(300ms));
}

TEST(Load, EndlessBodyTimesOut) {
  expect_all(run_against(Behaviour::endless_body, 200, 300ms), Outcome::timeout);
}

TEST(Load, HostileHeadersAreProtocolErrors) {
  expect_all(run_against(Behaviour::huge_headers), Outcome::protocol_error);
  expect_all(run_against(Behaviour::endless_headers), Outcome::protocol_error);
  expect_all(run_against(Behaviour::invalid_chunked), Outcome::protocol_error);
  expect_all(run_against(Behaviour::garbage), Outcome::protocol_error);
}

TEST(Load, StatusClasses) {
  expect_all(run_against(Behaviour::status, 502), Outcome::http_502);
  expect_all(run_against(Behaviour::status, 503), Outcome::http_503);
  expect_all(run_against(Behaviour::status, 504), Outcome::http_504);
  expect_all(run_against(Behaviour::status, 500), Outcome::http_5xx);
  expect_all(run_against(Behaviour::status, 404), Outcome::http_4xx);
  expect_all(run_against(Behaviour::chunked), Outcome::ok);
}

TEST(Load, OkStatusDecidesSuccess) {
  MisbehavingServer server({.behaviour = Behaviour::status, .status = 404});
  Options o = quick(server.url());
  o.ok_status = {{200, 399}, {404, 404}};
  expect_all(run_collecting(o), Outcome::ok);
}

TEST(Load, ConnectTimeoutWhenTheHandshakeNeverCompletes) {
  MisbehavingServer server({.behaviour = Behaviour::backlog_full});
  Options o = quick(server.url());
  o.duration = 100ms;
  o.connect_timeout = 200ms;
  expect_all(run_collecting(o), Outcome::connect_timeout);
}

TEST(Load, NoKeepaliveOpensAConnectionPerRequest) {
  MisbehavingServer server({});
  Options o = quick(server.url());
  o.keepalive = Keepalive::off;
  Result r = run_collecting(o);
  expect_all(r, Outcome::ok);
  EXPECT_EQ(r.summary.connections_opened, r.summary.requests);
  for (const auto& rec : r.records) {
    EXPECT_EQ(rec.connection, record::Connection::fresh);
  }
}

TEST(Load, MaxRequestsPerConnection) {
  MisbehavingServer server({});
  Options o = quick(server.url());
  o.connections = 1;
  o.max_requests_per_connection = 3;
  Result r = run_collecting(o);
  expect_all(r, Outcome::ok);
  EXPECT_EQ(r.summary.connections_opened, (r.summary.requests + 2) / 3);
}

TEST(Load, ClosedLoopStopsAfterMaxRequests) {
  MisbehavingServer server({});
  Options o = quick(server.url());
  o.rate = 0;
  o.duration = 30s;
  o.max_requests = 500;
  Result r = run_collecting(o);
  expect_all(r, Outcome::ok);
  EXPECT_EQ(r.summary.requests, 500u);
  EXPECT_EQ(r.summary.late, 0u);
  EXPECT_LT(r.summary.elapsed_s, 10);
}

// Two threads split one schedule: request k, whichever thread sends it, is intended at k / rate.
// Bounded by --requests, not by the duration, so that a loaded machine cannot leave any unsent.
TEST(Load, ThreadsShareTheScheduleWithoutGapsOrDuplicates) {
  MisbehavingServer server({});
  Options o = quick(server.url());
  o.threads = 2;
  o.rate = 400;
  o.duration = 60s;
  o.max_requests = 100;
  o.timeout = 30s;
  std::mutex mutex;
  std::set<uint64_t> seqs;
  uint64_t off_schedule = 0;
  Hooks hooks;
  hooks.on_record = [&](const record::RequestRecord& r) {
    std::lock_guard lock(mutex);
    seqs.insert(r.seq);
    off_schedule += r.intended != record::Micros(r.seq * 2500) ? 1 : 0;  // 400/s: 2.5 ms apart
  };
  Summary s = run(o, hooks);
  EXPECT_EQ(s.requests, 100u);
  EXPECT_EQ(s.ok, 100u);
  EXPECT_EQ(s.unsent, 0u);
  ASSERT_EQ(seqs.size(), 100u);
  EXPECT_EQ(*seqs.rbegin(), 99u);
  EXPECT_EQ(off_schedule, 0u);
}

TEST(Load, TargetsAreUsedRoundRobin) {
  MisbehavingServer a({.name = "pod-a"});
  MisbehavingServer b({.name = "pod-b"});
  Options o = quick(a.url());
  o.targets.push_back({"GET", b.url("/b")});
  Result r = run_collecting(o);
  expect_all(r, Outcome::ok);
  for (const auto& rec : r.records) {
    EXPECT_EQ(rec.target, rec.seq % 2);
    EXPECT_EQ(rec.backend, rec.target == 0 ? "pod-a" : "pod-b");
  }
}

TEST(Load, SlowServerMakesRequestsLateNotLost) {
  MisbehavingServer server({.behaviour = Behaviour::slow, .delay = 100ms});
  Options o = quick(server.url());
  o.connections = 1;
  o.rate = 50;
  o.duration = 300ms;
  o.timeout = 2s;
  Result r = run_collecting(o);
  EXPECT_GT(r.summary.late, 0u);
  EXPECT_EQ(r.summary.requests + r.summary.unsent, 15u) << "every due request is accounted for";
  EXPECT_GT(r.summary.latency_ms.max, r.summary.service_ms.max)
      << "latency counts the wait for a connection; service time does not";
}

// The worker's thread stalls (here: a slow record hook) across the end of the run: the requests
// whose intended time came before the end were neither sent nor dropped from the count.
TEST(Load, APacerThatWakesPastTheEndCountsWhatItOwesAsUnsent) {
  MisbehavingServer server({});
  Options o = quick(server.url());
  o.connections = 1;
  o.threads = 1;
  o.rate = 100;
  o.duration = 300ms;
  Hooks hooks;
  hooks.on_record = [](const record::RequestRecord& r) {
    if (r.seq == 5) {
      std::this_thread::sleep_for(400ms);  // past the end: the pacer wakes after it
    }
  };
  Summary s = run(o, hooks);
  EXPECT_GT(s.unsent, 0u);
  EXPECT_EQ(s.requests + s.unsent, 30u) << "every request intended before the end is counted";
}

TEST(Load, StopEndsTheRunEarly) {
  MisbehavingServer server({});
  Options o = quick(server.url());
  o.duration = 60s;
  std::atomic<bool> stop{false};
  Hooks hooks;
  hooks.stop = &stop;
  hooks.on_record = [&](const record::RequestRecord&) {
    stop = true;
  };
  Summary s = run(o, hooks);
  EXPECT_TRUE(s.interrupted);
  EXPECT_LT(s.elapsed_s, 5);
  EXPECT_GE(s.requests, 1u);
}

TEST(Load, IntervalHookGetsLiveCounts) {
  MisbehavingServer server({});
  Options o = quick(server.url());
  o.rate = 200;
  o.duration = 350ms;
  o.interval = 100ms;
  std::vector<Summary> intervals;
  Hooks hooks;
  hooks.on_interval = [&](const Summary& s) {
    intervals.push_back(s);
  };
  Summary total = run(o, hooks);
  ASSERT_GE(intervals.size(), 2u);
  uint64_t sum = 0;
  for (const Summary& s : intervals) {
    sum += s.requests;
  }
  EXPECT_LE(sum, total.requests);
  EXPECT_GT(sum, 0u);
}

TEST(Load, RejectsBadInputBeforeSending) {
  EXPECT_THROW(run(quick("ftp://127.0.0.1/"), {}), Error);
  EXPECT_THROW(run(quick("http://no-such-host.invalid/"), {}), Error);
  Options o = quick("http://127.0.0.1:1/");
  o.headers = {{"Bad Name", "x"}};
  EXPECT_THROW(run(o, {}), Error);
  o = quick("http://127.0.0.1:1/");
  o.rate = -1;
  EXPECT_THROW(run(o, {}), Error);
  for (double rate : {1e308, 1e-300, 2e7}) {  // a schedule that would spin or overflow
    o.rate = rate;
    EXPECT_THROW(run(o, {}), Error) << rate;
  }
  o.targets.clear();
  EXPECT_THROW(run(o, {}), Error);
}

}  // namespace
}  // namespace zerodrop::load
