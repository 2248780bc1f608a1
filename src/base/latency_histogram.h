#pragma once

#include <chrono>
#include <cstdint>
#include <vector>

namespace zerodrop {

// A log-bucketed latency histogram of fixed size (36 KiB): exact below 128 ns, then 128
// sub-buckets per power of two, so a quantile is within 0.4 % of the true value up to 73 minutes
// (longer values land in the last bucket; max() stays exact). Written by hand instead of using
// Boost.Histogram's log axis because add() sits on the load engine's hot path: a
// count-leading-zeros and a shift here, a std::log per sample there. The simulator keeps its
// propagation delays in one too. Not thread-safe; merge per-thread copies.
class LatencyHistogram {
public:
  LatencyHistogram();

  void add(std::chrono::nanoseconds value);
  void merge(const LatencyHistogram& other);

  uint64_t count() const { return count_; }

  std::chrono::nanoseconds max() const { return std::chrono::nanoseconds(max_); }

  // The value below which a fraction q (0..1) of the samples fall; 0 when empty.
  std::chrono::nanoseconds quantile(double q) const;

private:
  std::vector<uint64_t> counts_;
  uint64_t count_ = 0;
  int64_t max_ = 0;
};

}  // namespace zerodrop
