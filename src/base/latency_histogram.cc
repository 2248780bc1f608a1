#include "base/latency_histogram.h"

#include <algorithm>
#include <bit>
#include <cmath>

namespace zerodrop {
namespace {

constexpr int kSubBits = 7;  // 128 sub-buckets per power of two
constexpr uint64_t kSub = uint64_t{1} << kSubBits;
constexpr int kMaxExponent = 42;  // 2^42 ns = 73 minutes
constexpr size_t kBuckets = kSub + (kMaxExponent - kSubBits) * kSub;

size_t bucket_of(uint64_t v) {
  if (v < kSub) {
    return static_cast<size_t>(v);
  }
  int exponent = std::bit_width(v) - 1;  // >= kSubBits
  if (exponent >= kMaxExponent) {
    return kBuckets - 1;
  }
  uint64_t sub = (v >> (exponent - kSubBits)) - kSub;
  return static_cast<size_t>(kSub + static_cast<uint64_t>(exponent - kSubBits) * kSub + sub);
}

// The middle of a bucket's range, as the value it stands for.
int64_t value_of(size_t bucket) {
  if (bucket < kSub) {
    return static_cast<int64_t>(bucket);
  }
  size_t exponent = (bucket - kSub) / kSub + kSubBits;
  uint64_t sub = (bucket - kSub) % kSub;
  uint64_t width = uint64_t{1} << (exponent - kSubBits);
  return static_cast<int64_t>((kSub + sub) * width + width / 2);
}

}  // namespace

LatencyHistogram::LatencyHistogram() : counts_(kBuckets, 0) {}

void LatencyHistogram::add(std::chrono::nanoseconds value) {
  int64_t v = std::max<int64_t>(value.count(), 0);
  ++counts_[bucket_of(static_cast<uint64_t>(v))];
  ++count_;
  max_ = std::max(max_, v);
}

void LatencyHistogram::merge(const LatencyHistogram& other) {
  for (size_t i = 0; i < kBuckets; ++i) {
    counts_[i] += other.counts_[i];
  }
  count_ += other.count_;
  max_ = std::max(max_, other.max_);
}

std::chrono::nanoseconds LatencyHistogram::quantile(double q) const {
  if (count_ == 0) {
    return std::chrono::nanoseconds(0);
  }
  auto rank =
      static_cast<uint64_t>(std::ceil(std::clamp(q, 0.0, 1.0) * static_cast<double>(count_)));
  rank = std::max<uint64_t>(rank, 1);
  uint64_t seen = 0;
  for (size_t i = 0; i < kBuckets; ++i) {
    seen += counts_[i];
    if (seen >= rank) {
      return std::chrono::nanoseconds(std::min(value_of(i), max_));
    }
  }
  return std::chrono::nanoseconds(max_);
}

}  // namespace zerodrop
