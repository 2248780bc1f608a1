#pragma once

// The agent stream's compact form: instead of a line per request, a line per backend per 100 ms
// of the agent's timeline, plus a full line for every failed request.

#include <array>
#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include <nlohmann/json.hpp>

#include "base/duration.h"
#include "record/run_record.h"

namespace zerodrop::verify {

using record::Micros;

// What an agent streams besides hello and summary: `failed` (the default) a bucket line per
// backend per 100 ms plus a req line per failed request; `all` a req line per request.
enum class AgentRecords : uint8_t { failed, all };

// "failed" or "all"; Error naming `flag` otherwise.
AgentRecords parse_agent_records(const std::string& text, const char* flag);

inline constexpr Micros kAgentBucketWidth = std::chrono::milliseconds(100);

// Upper edges (ms) of a bucket's latency bins; the last bin holds everything slower.
inline constexpr std::array<int64_t, 12> kLatencyEdgesMs = {1,   2,   5,   10,   20,   50,
                                                            100, 200, 500, 1000, 2000, 5000};
inline constexpr size_t kLatencyBins = kLatencyEdgesMs.size() + 1;

// A fresh connection's two times: when it was meant to be sent (the estimator's lower bound) and
// when the router had chosen its backend at the latest (sent, else done).
struct FreshTime {
  Micros intended{0};
  Micros routed{0};
};

// One backend's requests intended in [start, start + 100 ms) of one agent's timeline.
struct BackendBucket {
  Micros start{0};
  std::string backend;           // "" = failures that named no pod
  std::array<uint64_t, 2> ok{};  // by record::Connection: fresh, reused
  std::array<uint64_t, 2> failed{};
  Micros latency_max{0};  // from the intended send to done, over every request
  std::array<uint64_t, kLatencyBins> latency{};  // counts per bin of kLatencyEdgesMs
  // The first and last successful fresh connection the backend answered (by intended time);
  // the last one's `routed` is the latest of the bucket's fresh successes (a safe upper bound).
  std::optional<FreshTime> fresh_first;
  std::optional<FreshTime> fresh_last;

  uint64_t requests() const { return ok[0] + ok[1] + failed[0] + failed[1]; }

  // Adds one request (its bucket and backend are the caller's to match).
  void add(const record::RequestRecord& r);
  // Adds another part of the same bucket and backend (an agent writes a late part apart).
  void merge(const BackendBucket& other);
};

// The bucket line's fields (without "k" and "n"), and back. from_json throws Error naming the
// field that is missing or malformed.
nlohmann::json to_json(const BackendBucket& b);
BackendBucket bucket_from_json(const nlohmann::json& j);

// The agent's open buckets. A bucket is written once `settle` has passed since its end on the
// agent's clock (its slowest request has finished by then); a record later still opens a new part
// of that bucket, which the verifier merges. Not thread-safe.
class Bucketer {
public:
  explicit Bucketer(Duration settle) : settle_(std::chrono::duration_cast<Micros>(settle)) {}

  void add(const record::RequestRecord& r);
  // The buckets settled by `now` (every bucket with `all`), in start order, taken out.
  std::vector<BackendBucket> take(Micros now);
  std::vector<BackendBucket> take_all();

private:
  Micros settle_;
  std::map<std::pair<int64_t, std::string>, BackendBucket> open_;  // by start µs, backend
};

// The verifier's fresh connections of one node: per-request records and bucketed ones in one
// form.
struct FreshSample {
  Micros intended{0};
  Micros routed{0};
  std::string backend;
  uint64_t count = 1;
  // A bucket's last entry: its `count` connections lie in (from, intended], the last at
  // `intended`, the others at times unknown.
  std::optional<Micros> from;
};

// The fresh samples of a bucket: its first connection, and the rest up to its last.
std::vector<FreshSample> fresh_samples(const BackendBucket& b);

// The successes of agents' buckets as the run record's time buckets (width 100 ms on the run's
// clock, only ok counts: every failure is a request record of its own).
std::vector<record::TimeBucket> ok_time_buckets(const std::vector<BackendBucket>& buckets);

}  // namespace zerodrop::verify
