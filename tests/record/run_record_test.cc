#include "record/run_record.h"

#include <cstdio>
#include <fstream>
#include <sstream>

#include <gtest/gtest.h>

#include "base/error.h"

namespace zerodrop::record {
namespace {

TEST(Outcome, NamesRoundTripAndStatusesMap) {
  for (size_t i = 0; i < kOutcomeCount; ++i) {
    auto o = static_cast<Outcome>(i);
    EXPECT_EQ(outcome_from_string(to_string(o)), o);
  }
  EXPECT_EQ(outcome_of_status(502), Outcome::http_502);
  EXPECT_EQ(outcome_of_status(500), Outcome::http_5xx);
  EXPECT_EQ(outcome_of_status(404), Outcome::http_4xx);
  EXPECT_FALSE(outcome_from_string("refused"));
}

TEST(RunRecord, NdjsonRoundTrip) {
  std::string path = ::testing::TempDir() + "/rr_test.ndjson";
  {
    std::ofstream out(path);
    RequestRecord r;
    r.seq = 7;
    r.intended = Micros(1000);
    r.sent = Micros(1010);
    r.done = Micros(2000);
    r.outcome = Outcome::connect_refused;
    r.failed = true;
    r.connection = Connection::reused;
    r.backend = "web-2";
    r.error = "connection refused";
    write_ndjson(out, r);
  }
  auto back = read_requests(path);
  ASSERT_EQ(back.size(), 1u);
  EXPECT_EQ(back[0].seq, 7u);
  EXPECT_EQ(back[0].sent, Micros(1010));
  EXPECT_FALSE(back[0].first_byte);
  EXPECT_EQ(back[0].outcome, Outcome::connect_refused);
  EXPECT_EQ(back[0].connection, Connection::reused);
  EXPECT_EQ(back[0].backend, "web-2");

  {
    std::ofstream out(path);
    Event e;
    e.t = Micros(4310000);
    e.kind = EventKind::router_applied;
    e.pod = "web-2";
    e.router = "node-3";
    e.conditions = Conditions{false, true, true};
    write_ndjson(out, e);
  }
  auto events = read_events(path);
  ASSERT_EQ(events.size(), 1u);
  EXPECT_EQ(events[0].kind, EventKind::router_applied);
  EXPECT_EQ(events[0].conditions, (Conditions{false, true, true}));
  std::remove(path.c_str());
}

TEST(RunRecord, RouterErrorIsWrittenOnlyWhenTheRouterAnsweredItself) {
  std::string path = ::testing::TempDir() + "/rr_router_error.ndjson";
  {
    std::ofstream out(path);
    RequestRecord r;
    r.outcome = Outcome::http_502;
    r.status = 502;
    r.router_error = "upstream_timeout";
    write_ndjson(out, r);
    RequestRecord app;  // the app's own answer: no field, as records written before it
    app.outcome = Outcome::http_502;
    app.status = 502;
    write_ndjson(out, app);
  }
  std::ifstream in(path);
  std::string first, second;
  std::getline(in, first);
  std::getline(in, second);
  EXPECT_NE(first.find("\"router_error\":\"upstream_timeout\""), std::string::npos) << first;
  EXPECT_EQ(second.find("router_error"), std::string::npos) << second;
  auto back = read_requests(path);
  ASSERT_EQ(back.size(), 2u);
  EXPECT_EQ(back[0].router_error, "upstream_timeout");
  EXPECT_EQ(back[1].router_error, "");
  std::remove(path.c_str());
}

TEST(RunRecord, VersionsMigrationsAndErrorBodiesRoundTrip) {
  std::string path = ::testing::TempDir() + "/rr_schema.ndjson";
  {
    std::ofstream out(path);
    Event pod;
    pod.kind = EventKind::pod_created;
    pod.pod = "pod-4";
    pod.version = "B";
    write_ndjson(out, pod);
    Event migration;
    migration.kind = EventKind::migration_finished;
    migration.exit_code = 3;
    migration.detail = "psql -f V2.sql: exit code 3";
    write_ndjson(out, migration);
  }
  auto events = read_events(path);
  ASSERT_EQ(events.size(), 2u);
  EXPECT_EQ(events[0].version, "B");
  EXPECT_EQ(events[1].kind, EventKind::migration_finished);
  EXPECT_EQ(events[1].exit_code, 3);
  EXPECT_EQ(events[1].version, "");
  {
    std::ofstream out(path);
    RequestRecord r;
    r.status = 500;
    r.outcome = Outcome::http_5xx;
    r.body = "ERROR:  column \"name\" does not exist";
    write_ndjson(out, r);
    write_ndjson(out, RequestRecord{});
  }
  std::ifstream in(path);
  std::string first, second;
  std::getline(in, first);
  std::getline(in, second);
  EXPECT_EQ(second.find("body"), std::string::npos) << second;  // only when there is one
  auto back = read_requests(path);
  ASSERT_EQ(back.size(), 2u);
  EXPECT_EQ(back[0].body, "ERROR:  column \"name\" does not exist");
  std::remove(path.c_str());
}

TEST(RunRecord, BackendCandidatesRoundTripAndAreWrittenOnlyWhenThere) {
  std::string path = ::testing::TempDir() + "/rr_candidates.ndjson";
  {
    std::ofstream out(path);
    RequestRecord r;
    r.outcome = Outcome::reset_before_response;
    r.failed = true;
    r.backend_candidates = {"web-1", "web-2"};
    write_ndjson(out, r);
    write_ndjson(out, RequestRecord{});
  }
  std::vector<RequestRecord> back = read_requests(path);
  ASSERT_EQ(back.size(), 2u);
  EXPECT_EQ(back[0].backend_candidates, (std::vector<std::string>{"web-1", "web-2"}));
  EXPECT_TRUE(back[1].backend_candidates.empty());
  std::ifstream in(path);
  std::string first, second;
  std::getline(in, first);
  std::getline(in, second);
  EXPECT_NE(first.find(R"("backend_candidates":["web-1","web-2"])"), std::string::npos) << first;
  EXPECT_EQ(second.find("backend_candidates"), std::string::npos) << second;
  std::remove(path.c_str());
}

TEST(RunRecord, BackendFateIsWrittenOnlyWhenARouterKnewTheConnection) {
  std::string path = ::testing::TempDir() + "/rr_backend_fate.ndjson";
  {
    std::ofstream out(path);
    RequestRecord r;
    r.outcome = Outcome::closed_before_response;
    r.backend_fate = BackendFate::idle_closed;
    r.backend_fate_at = Micros(4'000'100);
    write_ndjson(out, r);
    RequestRecord load;  // zerodrop load's records stay as they were
    write_ndjson(out, load);
    out << R"({"seq":2,"intended_us":0,"done_us":0,"class":"ok","backend_fate":"lost"})" << '\n';
  }
  std::ifstream in(path);
  std::string first, second;
  std::getline(in, first);
  std::getline(in, second);
  EXPECT_NE(first.find(R"("backend_fate":"idle_closed","backend_fate_us":4000100)"),
            std::string::npos)
      << first;
  EXPECT_EQ(second.find("backend_fate"), std::string::npos) << second;
  try {
    read_requests(path);
    FAIL() << "an unknown backend_fate was accepted";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("unknown backend_fate 'lost'"), std::string::npos)
        << e.what();
    EXPECT_NE(std::string(e.what()).find(":3:"), std::string::npos) << e.what();
  }
  std::remove(path.c_str());
}

TEST(RunRecord, BackendFateRoundTrips) {
  std::string path = ::testing::TempDir() + "/rr_backend_fate_rt.ndjson";
  {
    std::ofstream out(path);
    RequestRecord r;
    r.backend_fate = BackendFate::reset;
    r.backend_fate_at = Micros(7);
    write_ndjson(out, r);
    RequestRecord open;
    open.backend_fate = BackendFate::open;
    write_ndjson(out, open);
  }
  auto back = read_requests(path);
  ASSERT_EQ(back.size(), 2u);
  EXPECT_EQ(back[0].backend_fate, BackendFate::reset);
  EXPECT_EQ(back[0].backend_fate_at, Micros(7));
  EXPECT_EQ(back[1].backend_fate, BackendFate::open);
  EXPECT_EQ(back[1].backend_fate_at, std::nullopt);
  std::remove(path.c_str());
}

// A failure says whether a client could resend it; --client-retry's two attempts say which is
// which. An ok record carries none of it.
TEST(RunRecord, RetryFieldsRoundTripAndStayOutOfOkRecords) {
  std::string path = ::testing::TempDir() + "/rr_retry.ndjson";
  {
    std::ofstream out(path);
    RequestRecord first;
    first.outcome = Outcome::closed_before_response;
    first.failed = true;
    first.retry_safe = true;
    first.resent = true;
    write_ndjson(out, first);
    RequestRecord again;
    again.attempt = 2;
    write_ndjson(out, again);
    RequestRecord post;
    post.outcome = Outcome::reset_before_response;
    post.failed = true;
    write_ndjson(out, post);
    out << R"({"seq":3,"intended_us":0,"done_us":0,"class":"ok","attempt":3})" << '\n';
  }
  std::ifstream in(path);
  std::string line;
  std::getline(in, line);
  EXPECT_NE(line.find(R"("retry_safe":true)"), std::string::npos) << line;
  EXPECT_NE(line.find(R"("resent":true)"), std::string::npos) << line;
  std::getline(in, line);
  EXPECT_NE(line.find(R"("attempt":2)"), std::string::npos) << line;
  EXPECT_EQ(line.find("retry_safe"), std::string::npos) << line;
  std::getline(in, line);
  EXPECT_NE(line.find(R"("retry_safe":false)"), std::string::npos) << line;
  EXPECT_THROW(read_requests(path), Error);  // attempt 3
  std::ofstream(path, std::ios::trunc).close();
  {
    std::ofstream out(path);
    RequestRecord first;
    first.outcome = Outcome::closed_before_response;
    first.failed = first.retry_safe = first.resent = true;
    write_ndjson(out, first);
    RequestRecord again;
    again.attempt = 2;
    write_ndjson(out, again);
  }
  auto back = read_requests(path);
  ASSERT_EQ(back.size(), 2u);
  EXPECT_TRUE(back[0].retry_safe && back[0].resent);
  EXPECT_EQ(back[0].attempt, 1);
  EXPECT_EQ(back[1].attempt, 2);
  EXPECT_FALSE(back[1].retry_safe || back[1].resent);
  std::remove(path.c_str());
}

TEST(RunRecord, BadLineNamesFileAndLine) {
  std::string path = ::testing::TempDir() + "/rr_bad.ndjson";
  {
    std::ofstream out(path);
    out << "{\"t_us\":1,\"kind\":\"pod_created\"}\n{not json\n";
  }
  try {
    read_events(path);
    FAIL();
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find(":2:"), std::string::npos) << e.what();
  }
  std::remove(path.c_str());
}

TEST(RunRecord, BucketsRoundTripWithOkDerivedFromTheOthers) {
  TimeBucket b;
  b.start = Micros(2'000'000);
  b.width = Micros(1'000'000);
  b.requests = 200;
  b.outcomes[static_cast<size_t>(Outcome::connect_refused)] = 7;
  b.outcomes[static_cast<size_t>(Outcome::reset_before_response)] = 3;
  b.outcomes[static_cast<size_t>(Outcome::ok)] = 190;
  b.failures_by_hole[static_cast<size_t>(Hole::deregistration_race)] = 10;
  std::string path = ::testing::TempDir() + "/rr_buckets.ndjson";
  {
    std::ofstream out(path);
    write_ndjson(out, b);
    write_ndjson(out, TimeBucket{Micros(3'000'000), Micros(1'000'000), 0, {}, {}});
  }
  std::vector<TimeBucket> back = read_buckets(path);
  ASSERT_EQ(back.size(), 2u);
  EXPECT_EQ(back[0].start, b.start);
  EXPECT_EQ(back[0].width, b.width);
  EXPECT_EQ(back[0].requests, 200u);
  EXPECT_EQ(back[0].outcomes, b.outcomes);
  EXPECT_EQ(back[0].failures_by_hole, b.failures_by_hole);
  EXPECT_EQ(back[1].requests, 0u);

  // More failures than requests, or an unknown outcome: an error naming the line.
  {
    std::ofstream out(path);
    out << R"({"start_us":0,"width_us":1000000,"requests":1,"outcomes":{"connect_refused":2}})"
        << '\n'
        << R"({"start_us":0,"width_us":1000000,"requests":1,"outcomes":{"teleported":1}})" << '\n';
  }
  EXPECT_THROW(read_buckets(path), Error);
  std::remove(path.c_str());
}

TEST(RunRecord, TimesBeyondAWeekAreErrorsNotTimelinesOfYears) {
  std::string path = ::testing::TempDir() + "/rr_far.ndjson";
  {
    std::ofstream out(path);
    out << "{\"t_us\":1,\"kind\":\"pod_created\"}\n"
        << "{\"t_us\":900000000000000000,\"kind\":\"pod_created\"}\n";
  }
  try {
    read_events(path);
    FAIL() << "a time 28,000 years after the start was accepted";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find(":2: t_us: 900000000000000000 is more than a week"),
              std::string::npos)
        << e.what();
  }
  {
    std::ofstream out(path);
    out << R"({"start_us":0,"width_us":0,"requests":1})" << '\n';
  }
  EXPECT_THROW(read_buckets(path), Error);
  EXPECT_EQ(run_time(-5, "t_us"), Micros(-5));
  std::remove(path.c_str());
}

TEST(RunRecord, Http2FieldsRoundTripAndStayOutOfHttp1Records) {
  std::string path = ::testing::TempDir() + "/rr_h2.ndjson";
  RequestRecord r;
  r.outcome = Outcome::ok;
  r.status = 200;
  r.h2 = Http2Facts{Proto::grpc,
                    3,
                    7,
                    2,
                    8u,
                    GoawayRecord{Micros(1500), 5, 0, "drain"},
                    14,
                    "Cancelling all calls",
                    FirstAttemptRecord{Outcome::goaway_unprocessed, 2, 9, Micros(1400)}};
  RequestRecord plain;
  {
    std::ofstream out(path);
    write_ndjson(out, r);
    write_ndjson(out, plain);
  }
  std::ifstream in(path);
  std::string first, second;
  std::getline(in, first);
  std::getline(in, second);
  EXPECT_NE(first.find("\"rst\":\"CANCEL\""), std::string::npos) << first;
  EXPECT_NE(first.find("\"goaway\":{\"debug\":\"drain\",\"error\":\"NO_ERROR\""), std::string::npos)
      << first;
  EXPECT_EQ(second.find("proto"), std::string::npos) << second;
  auto back = read_requests(path);
  ASSERT_EQ(back.size(), 2u);
  ASSERT_TRUE(back[0].h2);
  const Http2Facts& h = *back[0].h2;
  EXPECT_EQ(h.proto, Proto::grpc);
  EXPECT_EQ(h.conn, 3u);
  EXPECT_EQ(h.stream, 7u);
  EXPECT_EQ(h.attempts, 2u);
  EXPECT_EQ(h.rst, 8u);
  ASSERT_TRUE(h.goaway);
  EXPECT_EQ(h.goaway->last_stream_id, 5u);
  EXPECT_EQ(h.goaway->debug, "drain");
  EXPECT_EQ(h.grpc_status, 14);
  EXPECT_EQ(h.grpc_message, "Cancelling all calls");
  ASSERT_TRUE(h.first_attempt);
  EXPECT_EQ(h.first_attempt->outcome, Outcome::goaway_unprocessed);
  EXPECT_EQ(h.first_attempt->done, Micros(1400));
  EXPECT_FALSE(back[1].h2);
  EXPECT_EQ(h2_error_name(0x1f), "0x1f");
  EXPECT_EQ(h2_error_from_name("0x1f"), 0x1fu);
  EXPECT_EQ(h2_error_from_name("REFUSED_STREAM"), 7u);
  EXPECT_FALSE(h2_error_from_name("0xzz"));
  std::remove(path.c_str());
}

}  // namespace
}  // namespace zerodrop::record
