#pragma once

#include <array>
#include <cstdint>
#include <string>
#include <vector>

#include "diagnose/diagnose.h"
#include "record/run_record.h"

namespace zerodrop::report {

using record::Micros;

// Requests sent in one stretch of the run, and its failures by hole. Internal to report.
struct Bucket {
  Micros start{0};
  Micros width{0};
  uint64_t requests = 0;
  uint64_t failed = 0;
  std::array<uint64_t, record::kHoleCount> by_hole{};
};

// The run cut into buckets of `width` by send time; failures stacked by their diagnosed hole.
// Sim records (no single requests) are re-bucketed from their own buckets.
std::vector<Bucket> bucketize(const record::RunRecord& run, const diagnose::Diagnosis& diagnosis,
                              Micros width);

// The last moment the record knows: its end, or its latest event or request.
Micros run_end(const record::RunRecord& run);

enum class MarkKind : uint8_t { pod, router, rollout, disruption, connection };

// A moment worth a mark on a timeline: a pod's lifecycle event, a router's update, or HTTP/2
// connections a pod sent GOAWAY on or closed without one.
struct Mark {
  Micros t{0};
  MarkKind kind = MarkKind::pod;
  std::string text;  // "web-0 SIGTERM", "node-2 drops web-0"
};

// Pod lifecycle moments, router terminations, rollout steps, the disruption and HTTP/2 connection
// events, in time order.
std::vector<Mark> marks(const record::RunRecord& run, const diagnose::Diagnosis& diagnosis);

// A bucket width giving at most `max_buckets` over `span`: 0.1 s, 0.2 s, 0.5 s, 1 s, 2 s, 5 s …
Micros nice_width(Micros span, int max_buckets);

// Seconds with two decimals, as every report prints times ("4.31").
std::string seconds(Micros t);

}  // namespace zerodrop::report
