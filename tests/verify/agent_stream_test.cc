// The agent stream's compact form: buckets per backend per 100 ms, their merge, and the
// propagation estimate from them.
#include <algorithm>
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "verify/agent.h"
#include "verify/agent_buckets.h"
#include "verify/agents.h"
#include "verify/propagation.h"

namespace zerodrop::verify {
namespace {

using record::Connection;
using record::RequestRecord;
using std::chrono::milliseconds;

RequestRecord bucket_probe(int64_t intended_us, const std::string& backend,
                           Connection connection = Connection::fresh, bool failed = false) {
  RequestRecord r;
  r.intended = Micros(intended_us);
  r.sent = r.intended + Micros(50);
  r.done = r.intended + milliseconds(3);
  r.backend = backend;
  r.connection = connection;
  r.failed = failed;
  return r;
}

TEST(AgentBuckets, OneBucketPerBackendPer100msWithExactFreshEnds) {
  Bucketer bucketer(std::chrono::seconds(1));
  bucketer.add(bucket_probe(0, "a"));
  bucketer.add(bucket_probe(40'000, "b"));
  bucketer.add(bucket_probe(99'999, "a"));  // the last µs of the first bucket
  bucketer.add(bucket_probe(60'000, "a", Connection::reused));
  bucketer.add(bucket_probe(70'000, "a", Connection::fresh, true));
  bucketer.add(bucket_probe(100'000, "a"));                // the next bucket
  EXPECT_TRUE(bucketer.take(milliseconds(1099)).empty());  // not settled: 100 ms + 1 s
  std::vector<BackendBucket> first = bucketer.take(milliseconds(1100));
  ASSERT_EQ(first.size(), 2u);  // a and b of [0, 100 ms)
  const BackendBucket& a = first[0].backend == "a" ? first[0] : first[1];
  const BackendBucket& b = first[0].backend == "a" ? first[1] : first[0];
  EXPECT_EQ(a.start, Micros(0));
  EXPECT_EQ(a.ok[0], 2u);
  EXPECT_EQ(a.ok[1], 1u);
  EXPECT_EQ(a.failed[0], 1u);
  EXPECT_EQ(a.requests(), 4u);
  ASSERT_TRUE(a.fresh_first && a.fresh_last);
  EXPECT_EQ(a.fresh_first->intended, Micros(0));  // a failure is not an answer
  EXPECT_EQ(a.fresh_last->intended, Micros(99'999));
  EXPECT_EQ(a.fresh_last->routed, Micros(100'049));
  EXPECT_EQ(a.latency_max, milliseconds(3));
  EXPECT_EQ(a.latency[2], 4u);  // 3 ms: the bin up to 5 ms
  EXPECT_EQ(b.requests(), 1u);
  EXPECT_EQ(b.fresh_first->intended, Micros(40'000));
  std::vector<BackendBucket> rest = bucketer.take_all();
  ASSERT_EQ(rest.size(), 1u);
  EXPECT_EQ(rest[0].start, Micros(100'000));
}

TEST(AgentBuckets, LinesRoundTripAndPartsMerge) {
  BackendBucket early;
  early.start = Micros(200'000);
  early.backend = "web-1";
  early.add(bucket_probe(210'000, "web-1"));
  BackendBucket late = early;  // a part written after the bucket had settled
  late = BackendBucket{Micros(200'000), "web-1"};
  late.add(bucket_probe(290'000, "web-1"));
  late.add(bucket_probe(250'000, "web-1", Connection::fresh, true));
  nlohmann::json j = to_json(late);
  j["k"] = "bucket";
  j["n"] = 5;
  auto line = parse_agent_line(j.dump());
  ASSERT_TRUE(line && line->bucket);
  EXPECT_EQ(line->bucket->failed[0], 1u);
  early.merge(*line->bucket);
  EXPECT_EQ(early.requests(), 3u);
  EXPECT_EQ(early.fresh_first->intended, Micros(210'000));
  EXPECT_EQ(early.fresh_last->intended, Micros(290'000));
  j.erase("ok");
  EXPECT_THROW(parse_agent_line(j.dump()), std::exception);
  EXPECT_THROW(parse_agent_records("some", "--agent-records"), std::exception);
}

TEST(AgentBuckets, CountsEqualThePerRequestCounts) {
  std::vector<RequestRecord> requests;
  for (int i = 0; i < 1000; ++i) {
    bool failed = i % 97 == 0;
    requests.push_back(bucket_probe(i * 1'700, i % 3 == 0 ? "a" : "b",
                                    i % 2 == 0 ? Connection::fresh : Connection::reused, failed));
  }
  Bucketer bucketer(std::chrono::seconds(1));
  std::vector<BackendBucket> buckets;
  for (const RequestRecord& r : requests) {
    bucketer.add(r);
    for (BackendBucket& b : bucketer.take(r.done)) {
      buckets.push_back(b);
    }
  }
  for (BackendBucket& b : bucketer.take_all()) {
    buckets.push_back(b);
  }
  uint64_t total = 0;
  uint64_t failed = 0;
  for (const BackendBucket& b : buckets) {
    total += b.requests();
    failed += b.failed[0] + b.failed[1];
  }
  auto failures = std::count_if(requests.begin(), requests.end(), [](auto& r) { return r.failed; });
  EXPECT_EQ(total, requests.size());
  EXPECT_EQ(failed, static_cast<uint64_t>(failures));
  uint64_t ok = 0;
  for (const record::TimeBucket& t : ok_time_buckets(buckets)) {
    EXPECT_EQ(t.width, kAgentBucketWidth);
    ok += t.requests;
  }
  EXPECT_EQ(ok, requests.size() - static_cast<uint64_t>(failures));
}

// The stream's lines, with line 2 lost: the gap is said, the rest delivered once each.
TEST(AgentStreamMerge, AGapIsSaidAndRepeatsAreSkipped) {
  std::vector<std::string> notes;
  std::vector<BackendBucket> buckets;
  AgentSummary summary;
  AgentSink sink;
  sink.on_hello = [](const AgentHello&) {
  };
  sink.on_request = [](const AgentHello&, RequestRecord) {
  };
  sink.on_bucket = [&](const AgentHello& h, const BackendBucket& b) {
    EXPECT_EQ(h.records, AgentRecords::failed);
    buckets.push_back(b);
  };
  sink.on_summary = [&](const AgentHello&, const AgentSummary& s) {
    summary = s;
  };
  sink.on_note = [&](const std::string& text) {
    notes.push_back(text);
  };
  AgentStream stream("agent-0", "node-1", sink);
  auto bucket_line = [](uint64_t n, int64_t start) {
    BackendBucket b{Micros(start), "web-1"};
    b.add(bucket_probe(start, "web-1"));
    nlohmann::json j = to_json(b);
    j["k"] = "bucket";
    j["n"] = n;
    return j.dump();
  };
  EXPECT_TRUE(stream.feed(R"({"k":"hello","n":0,"node":"node-1","records":"failed","wall_us":7})"));
  EXPECT_FALSE(stream.feed(bucket_line(1, 0)));
  EXPECT_FALSE(stream.feed(bucket_line(1, 0)));  // a resumed follow reads it again
  EXPECT_FALSE(stream.feed("container runtime: hello"));
  stream.feed(bucket_line(3, 200'000));
  stream.feed(R"({"k":"summary","n":4,"requests":3,"failed":0})");
  stream.feed(R"({"k":"bye","n":5,"lines":6})");
  ASSERT_EQ(notes.size(), 1u);
  EXPECT_EQ(notes[0], "agent agent-0 on node-1: lines 2-2 of its stream are missing");
  ASSERT_EQ(buckets.size(), 2u);
  EXPECT_EQ(buckets[1].start, Micros(200'000));
  EXPECT_EQ(summary.requests, 3u);
  EXPECT_TRUE(stream.said_bye());
  EXPECT_EQ(stream.next(), 6u);
}

// A node's agent opens a fresh connection every `step`; the router picks among the backends in
// turn until `applied`, then never "old" again.
std::vector<RequestRecord> rotation(milliseconds step, Micros applied) {
  std::vector<RequestRecord> out;
  std::vector<std::string> backends = {"old", "a", "b"};
  size_t turn = 0;
  for (Micros t{0}; t < std::chrono::seconds(3); t += step) {
    std::vector<std::string> in = backends;
    if (t >= applied) {
      in.erase(in.begin());
    }
    RequestRecord r = bucket_probe(t.count(), in[turn++ % in.size()]);
    r.router = "node/n1";
    r.seq = out.size();
    out.push_back(r);
  }
  return out;
}

std::vector<BackendBucket> bucketed(const std::vector<RequestRecord>& requests) {
  Bucketer bucketer(std::chrono::seconds(1));
  for (const RequestRecord& r : requests) {
    bucketer.add(r);
  }
  return bucketer.take_all();
}

TEST(AgentBuckets, TheEstimateFromBucketsKeepsTheBounds) {
  record::Event deleted;
  deleted.kind = record::EventKind::deletion_started;
  deleted.pod = "old";
  deleted.t = milliseconds(1000);
  Micros applied = milliseconds(1512);
  // Two connections a bucket: each bucket holds at most one per backend, so nothing is lost.
  auto sparse = rotation(milliseconds(50), applied);
  auto exact = estimate_updates({deleted}, sparse);
  auto from_buckets = estimate_updates({deleted}, {}, {{"node/n1", bucketed(sparse)}});
  ASSERT_EQ(exact.size(), 1u);
  ASSERT_EQ(from_buckets.size(), 1u);
  EXPECT_EQ(from_buckets[0].lo, exact[0].lo);
  ASSERT_TRUE(exact[0].hi && from_buckets[0].hi);
  EXPECT_EQ(*from_buckets[0].hi, *exact[0].hi);
  EXPECT_EQ(from_buckets[0].backends, exact[0].backends);
  // Ten a bucket: `lo` stays exact; `hi` may come later, never earlier, and still bounds.
  auto dense = rotation(milliseconds(10), applied);
  exact = estimate_updates({deleted}, dense);
  from_buckets = estimate_updates({deleted}, {}, {{"node/n1", bucketed(dense)}});
  ASSERT_EQ(from_buckets.size(), 1u);
  EXPECT_EQ(from_buckets[0].lo, exact[0].lo);
  EXPECT_LT(from_buckets[0].lo, applied);
  ASSERT_TRUE(from_buckets[0].hi);
  EXPECT_GE(*from_buckets[0].hi, *exact[0].hi);
  EXPECT_GE(*from_buckets[0].hi, applied);
  EXPECT_LT(*from_buckets[0].hi, applied + milliseconds(400));
}

}  // namespace
}  // namespace zerodrop::verify
