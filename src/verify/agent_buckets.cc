#include "verify/agent_buckets.h"

#include <algorithm>

#include <fmt/format.h>

#include "base/error.h"

namespace zerodrop::verify {

using Json = nlohmann::json;  // not `json`: other files of the unity build name variables so

namespace {

size_t latency_bin(Micros latency) {
  auto ms = std::chrono::duration_cast<std::chrono::milliseconds>(latency).count();
  auto it = std::lower_bound(kLatencyEdgesMs.begin(), kLatencyEdgesMs.end(), ms);
  return static_cast<size_t>(it - kLatencyEdgesMs.begin());
}

Micros routed_time(const record::RequestRecord& r) {
  return r.sent.value_or(r.done);
}

// A whole number >= 0 at j[field] (or j[field][index]), else Error naming it.
uint64_t count_at(const Json& j, const char* field, size_t index) {
  const Json& v = j.at(field);
  if (!v.is_array() || v.size() <= index || !v[index].is_number_unsigned()) {
    throw Error(fmt::format("agent bucket: \"{}\" must hold {} whole numbers", field, index + 1));
  }
  return v[index].get<uint64_t>();
}

}  // namespace

AgentRecords parse_agent_records(const std::string& text, const char* flag) {
  if (text == "failed") {
    return AgentRecords::failed;
  }
  if (text == "all") {
    return AgentRecords::all;
  }
  throw Error(fmt::format("{}: expected failed or all, got '{}'", flag, text));
}

void BackendBucket::add(const record::RequestRecord& r) {
  auto kind = static_cast<size_t>(r.connection);
  ++(r.failed ? failed : ok)[kind];
  Micros took = r.done - r.intended;
  latency_max = std::max(latency_max, took);
  ++latency[latency_bin(took)];
  if (r.failed || r.connection != record::Connection::fresh || r.backend.empty()) {
    return;
  }
  FreshTime t{r.intended, routed_time(r)};
  if (!fresh_first || t.intended < fresh_first->intended) {
    fresh_first = t;
  }
  Micros latest_routed = fresh_last ? std::max(fresh_last->routed, t.routed) : t.routed;
  if (!fresh_last || t.intended >= fresh_last->intended) {
    fresh_last = t;
  }
  fresh_last->routed = latest_routed;
}

void BackendBucket::merge(const BackendBucket& o) {
  for (size_t i = 0; i < 2; ++i) {
    ok[i] += o.ok[i];
    failed[i] += o.failed[i];
  }
  latency_max = std::max(latency_max, o.latency_max);
  for (size_t i = 0; i < kLatencyBins; ++i) {
    latency[i] += o.latency[i];
  }
  if (o.fresh_first && (!fresh_first || o.fresh_first->intended < fresh_first->intended)) {
    fresh_first = o.fresh_first;
  }
  if (o.fresh_last) {
    Micros routed =
        fresh_last ? std::max(fresh_last->routed, o.fresh_last->routed) : o.fresh_last->routed;
    if (!fresh_last || o.fresh_last->intended >= fresh_last->intended) {
      fresh_last = o.fresh_last;
    }
    fresh_last->routed = routed;
  }
}

Json to_json(const BackendBucket& b) {
  Json j = {
      {"t_us", b.start.count()},         {"backend", b.backend}, {"ok", b.ok}, {"failed", b.failed},
      {"max_us", b.latency_max.count()}, {"hist", b.latency}};
  if (b.fresh_first && b.fresh_last) {
    j["fresh"] = {b.fresh_first->intended.count(), b.fresh_first->routed.count(),
                  b.fresh_last->intended.count(), b.fresh_last->routed.count()};
  }
  return j;
}

BackendBucket bucket_from_json(const Json& j) {
  BackendBucket b;
  for (const char* field : {"t_us", "backend", "ok", "failed", "max_us", "hist"}) {
    if (!j.contains(field)) {
      throw Error(fmt::format("agent bucket: no \"{}\"", field));
    }
  }
  if (!j["t_us"].is_number_integer() || !j["max_us"].is_number_integer()
      || !j["backend"].is_string()) {
    throw Error("agent bucket: \"t_us\" and \"max_us\" must be whole numbers, \"backend\" a text");
  }
  b.start = record::run_time(j["t_us"].get<int64_t>(), "t_us");
  b.backend = j["backend"].get<std::string>();
  b.latency_max = Micros(j["max_us"].get<int64_t>());
  for (size_t i = 0; i < 2; ++i) {
    b.ok[i] = count_at(j, "ok", i);
    b.failed[i] = count_at(j, "failed", i);
  }
  for (size_t i = 0; i < kLatencyBins; ++i) {
    b.latency[i] = count_at(j, "hist", i);
  }
  if (j.contains("fresh")) {
    auto at = [&](size_t i) {
      return record::run_time(static_cast<int64_t>(count_at(j, "fresh", i)), "fresh");
    };
    b.fresh_first = FreshTime{at(0), at(1)};
    b.fresh_last = FreshTime{at(2), at(3)};
  }
  return b;
}

void Bucketer::add(const record::RequestRecord& r) {
  int64_t start = r.intended.count() - r.intended.count() % kAgentBucketWidth.count();
  BackendBucket& b = open_[{start, r.backend}];
  b.start = Micros(start);
  b.backend = r.backend;
  b.add(r);
}

std::vector<BackendBucket> Bucketer::take(Micros now) {
  std::vector<BackendBucket> out;
  auto it = open_.begin();
  for (; it != open_.end() && Micros(it->first.first) + kAgentBucketWidth + settle_ <= now; ++it) {
    out.push_back(std::move(it->second));
  }
  open_.erase(open_.begin(), it);
  return out;
}

std::vector<BackendBucket> Bucketer::take_all() {
  return take(Micros::max() - kAgentBucketWidth - settle_);
}

std::vector<FreshSample> fresh_samples(const BackendBucket& b) {
  if (!b.fresh_first || !b.fresh_last || b.ok[0] == 0) {
    return {};
  }
  std::vector<FreshSample> out = {{b.fresh_first->intended, b.fresh_first->routed, b.backend}};
  if (b.ok[0] > 1) {
    out.push_back({b.fresh_last->intended, b.fresh_last->routed, b.backend, b.ok[0] - 1,
                   b.fresh_first->intended});
  }
  return out;
}

std::vector<record::TimeBucket> ok_time_buckets(const std::vector<BackendBucket>& buckets) {
  std::map<int64_t, record::TimeBucket> by_start;
  for (const BackendBucket& b : buckets) {
    uint64_t ok = b.ok[0] + b.ok[1];
    if (ok == 0) {
      continue;
    }
    int64_t start = std::max<int64_t>(0, b.start.count());
    start -= start % kAgentBucketWidth.count();
    record::TimeBucket& t = by_start[start];
    t.start = Micros(start);
    t.width = kAgentBucketWidth;
    t.requests += ok;
    t.outcomes[static_cast<size_t>(record::Outcome::ok)] += ok;
  }
  std::vector<record::TimeBucket> out;
  for (auto& [start, t] : by_start) {
    out.push_back(t);
  }
  return out;
}

}  // namespace zerodrop::verify
