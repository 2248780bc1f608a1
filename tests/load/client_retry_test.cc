// Which failures a client would have seen: retry-safe marking, --client-retry's resend on a new
// connection, and --fresh-share's mix of new and reused connections.
#include <algorithm>

#include <gtest/gtest.h>

#include "base/error.h"
#include "load/load.h"
#include "load/plan.h"
#include "testing/misbehaving_server.h"

namespace zerodrop::load {
namespace {

using namespace std::chrono_literals;
using record::Outcome;
using testing::Behaviour;
using testing::MisbehavingServer;
using testing::ServerOptions;

// One connection, closed loop: request 1 opens it, request 2 reuses it (and is cut by a
// close-reused server), request 3 opens a new one, and so on.
Options one_connection(const std::string& url, const std::string& method) {
  Options o;
  o.targets = {{method, url}};
  o.rate = 0;
  o.duration = 10s;
  o.max_requests = 6;
  o.connections = 1;
  o.timeout = 2s;
  o.connect_timeout = 2s;
  return o;
}

struct Recorded {
  Summary summary;
  std::vector<record::RequestRecord> records;
};

Recorded run_recording(const Options& options) {
  Recorded result;
  Hooks hooks;
  hooks.on_record = [&](const record::RequestRecord& r) {
    result.records.push_back(r);
  };
  result.summary = run(options, hooks);
  return result;
}

TEST(RetrySafe, OnlyAnIdempotentRequestBrokenOnAReusedConnectionBeforeAnyByte) {
  using record::Connection;
  using record::Idempotent;
  using record::ResponseBytes;
  auto safe = [](Outcome o, Connection c, ResponseBytes b, Idempotent m) {
    return record::retry_safe(o, c, b, m);
  };
  EXPECT_TRUE(safe(Outcome::closed_before_response, Connection::reused, ResponseBytes::none,
                   Idempotent::yes));
  EXPECT_TRUE(safe(Outcome::reset_before_response, Connection::reused, ResponseBytes::none,
                   Idempotent::yes));
  EXPECT_FALSE(safe(Outcome::reset_before_response, Connection::fresh, ResponseBytes::none,
                    Idempotent::yes));  // a new connection: the server saw it fail, not a race
  EXPECT_FALSE(safe(Outcome::reset_before_response, Connection::reused, ResponseBytes::none,
                    Idempotent::no));  // a POST may have been acted on
  EXPECT_FALSE(safe(Outcome::reset_before_response, Connection::reused, ResponseBytes::some,
                    Idempotent::yes));  // the server had begun to answer
  EXPECT_FALSE(safe(Outcome::timeout, Connection::reused, ResponseBytes::none, Idempotent::yes));
  EXPECT_FALSE(safe(Outcome::http_502, Connection::reused, ResponseBytes::some, Idempotent::yes));
}

TEST(RetrySafe, AGetCutOnAReusedConnectionIsMarkedAndCountedButNotResent) {
  MisbehavingServer server({.behaviour = Behaviour::close_reused});
  Recorded r = run_recording(one_connection(server.url(), "GET"));
  ASSERT_EQ(r.records.size(), 6u);
  for (const record::RequestRecord& rec : r.records) {
    bool reused = rec.connection == record::Connection::reused;
    EXPECT_EQ(rec.failed, reused) << rec.seq;
    EXPECT_EQ(rec.retry_safe, reused) << rec.seq;
    EXPECT_EQ(rec.attempt, 1);
    EXPECT_FALSE(rec.resent);
  }
  EXPECT_EQ(r.summary.failed, 3u);
  EXPECT_EQ(r.summary.retry_safe, 3u);
  EXPECT_EQ(r.summary.resent, 0u);
  EXPECT_FALSE(r.summary.client_retry);
}

TEST(RetrySafe, APostIsNeverRetrySafe) {
  MisbehavingServer server({.behaviour = Behaviour::close_reused});
  Options o = one_connection(server.url(), "POST");
  o.client_retry = ClientRetry::once;
  Recorded r = run_recording(o);
  EXPECT_EQ(r.summary.failed, 3u);
  EXPECT_EQ(r.summary.retry_safe, 0u);
  EXPECT_EQ(r.summary.resent, 0u);
  EXPECT_EQ(r.records.size(), 6u);
}

// A browser-like client resends each retry-safe failure once on a new connection: the resend is
// that connection's first request, so it succeeds; both attempts are recorded under one seq.
TEST(ClientRetry, ResendsARetrySafeFailureOnceOnANewConnection) {
  MisbehavingServer server({.behaviour = Behaviour::close_reused});
  Options o = one_connection(server.url(), "GET");
  o.client_retry = ClientRetry::once;
  Recorded r = run_recording(o);
  EXPECT_TRUE(r.summary.client_retry);
  EXPECT_EQ(r.summary.resent, r.summary.failed);
  EXPECT_EQ(r.summary.resent_ok, r.summary.resent);
  EXPECT_GT(r.summary.failed, 0u);
  EXPECT_EQ(r.summary.requests, 6u + r.summary.resent);
  for (const record::RequestRecord& rec : r.records) {
    if (rec.attempt == 2) {
      EXPECT_EQ(rec.connection, record::Connection::fresh) << rec.seq;
      EXPECT_FALSE(rec.failed) << rec.seq;
      auto first = std::find_if(r.records.begin(), r.records.end(),
                                [&](const auto& x) { return x.seq == rec.seq && x.attempt == 1; });
      ASSERT_NE(first, r.records.end());
      EXPECT_TRUE(first->failed && first->retry_safe && first->resent);
    }
  }
  EXPECT_EQ(server.requests(), r.records.size());
}

// Open loop with spare connections: a resend and the new requests that are due leave in one
// dispatch round. Each new request is a first attempt with its own seq (a resend's fields once
// leaked into the next new request, which then popped an empty resend queue).
TEST(ClientRetry, NewRequestsAfterAResendAreFirstAttempts) {
  MisbehavingServer server({.behaviour = Behaviour::close_reused});
  Options o = one_connection(server.url(), "GET");
  o.rate = 2000;
  o.connections = 16;
  o.max_requests = 60;
  o.client_retry = ClientRetry::once;
  Recorded r = run_recording(o);
  EXPECT_GT(r.summary.resent, 0u);
  EXPECT_EQ(r.summary.requests, 60u + r.summary.resent);
  std::vector<int> first_attempts(60, 0);
  for (const record::RequestRecord& rec : r.records) {
    ASSERT_LT(rec.seq, 60u);
    first_attempts[rec.seq] += rec.attempt == 1 ? 1 : 0;
  }
  for (size_t seq = 0; seq < first_attempts.size(); ++seq) {
    EXPECT_EQ(first_attempts[seq], 1) << "seq " << seq;
  }
  EXPECT_EQ(server.requests(), r.records.size());
}

TEST(ClientRetry, IsRefusedOverHttp2) {
  Options o = one_connection("http://127.0.0.1:1/", "GET");
  o.protocol = Protocol::http2;
  o.client_retry = ClientRetry::once;
  EXPECT_THROW(make_plan(o), Error);
}

TEST(FreshShare, ClosesThatShareOfRequestsEvenly) {
  auto count = [](double share) {
    int n = 0;
    for (uint64_t k = 0; k < 1000; ++k) {
      n += closes_connection(share, k) ? 1 : 0;
    }
    return n;
  };
  EXPECT_EQ(count(0), 0);
  EXPECT_EQ(count(0.25), 250);
  EXPECT_EQ(count(0.5), 500);
  EXPECT_EQ(count(1), 1000);
  EXPECT_TRUE(closes_connection(0.5, 1));
  EXPECT_FALSE(closes_connection(0.5, 2));  // every other one
}

TEST(FreshShare, OpensANewConnectionAfterEachClosingRequest) {
  MisbehavingServer server({});
  Options o = one_connection(server.url(), "GET");
  o.max_requests = 40;
  o.fresh_share = 0.25;
  Recorded r = run_recording(o);
  ASSERT_EQ(r.records.size(), 40u);
  EXPECT_EQ(r.summary.failed, 0u);
  EXPECT_EQ(r.summary.connections_opened, 10u);  // requests 3, 7, …, 39 close: the 40th ends it
}

TEST(FreshShare, RejectsAShareOutsideZeroToOne) {
  Options o = one_connection("http://127.0.0.1:1/", "GET");
  o.fresh_share = 1.5;
  EXPECT_THROW(make_plan(o), Error);
}

}  // namespace
}  // namespace zerodrop::load
