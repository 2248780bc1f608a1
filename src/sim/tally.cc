#include "sim/tally.h"

#include <algorithm>
#include <cmath>

namespace zerodrop::sim {
namespace {

constexpr size_t kCells = record::kHoleCount * record::kOutcomeCount;

}  // namespace

Tally::Tally(double end, double width)
    : end_(end),
      width_(width),
      buckets_(static_cast<size_t>(std::max(1.0, std::ceil(end / width)))),
      direct_(kCells * buckets_, 0.0),
      full_(kCells * (buckets_ + 1), 0.0) {}

size_t Tally::cell(record::Hole hole, record::Outcome outcome) const {
  return static_cast<size_t>(hole) * record::kOutcomeCount + static_cast<size_t>(outcome);
}

size_t Tally::bucket_of(double t) const {
  return std::min(buckets_ - 1, static_cast<size_t>(std::max(0.0, t / width_)));
}

void Tally::add_window(double from, double to, double per_second, record::Hole hole,
                       record::Outcome outcome) {
  from = std::max(from, 0.0);
  to = std::min(to, end_);
  if (!(to > from) || per_second <= 0) {
    return;
  }
  size_t c = cell(hole, outcome);
  size_t first = bucket_of(from), last = bucket_of(to);
  if (first == last) {
    direct_[c * buckets_ + first] += per_second * (to - from);
    return;
  }
  direct_[c * buckets_ + first] += per_second * ((first + 1) * width_ - from);
  direct_[c * buckets_ + last] += per_second * (to - last * width_);
  if (last > first + 1) {
    full_[c * (buckets_ + 1) + first + 1] += per_second * width_;
    full_[c * (buckets_ + 1) + last] -= per_second * width_;
  }
}

void Tally::add_point(double t, double mean, record::Hole hole, record::Outcome outcome) {
  if (mean <= 0 || t < 0 || t >= end_) {
    return;
  }
  direct_[cell(hole, outcome) * buckets_ + bucket_of(t)] += mean;
}

std::vector<double> Tally::totals() const {
  std::vector<double> out(direct_);
  for (size_t c = 0; c < kCells; ++c) {
    double running = 0;
    for (size_t b = 0; b < buckets_; ++b) {
      running += full_[c * (buckets_ + 1) + b];
      out[c * buckets_ + b] += std::max(running, 0.0);
    }
  }
  return out;
}

double Tally::expected(record::Hole hole) const {
  std::vector<double> all = totals();
  double sum = 0;
  for (size_t o = 0; o < record::kOutcomeCount; ++o) {
    size_t c = static_cast<size_t>(hole) * record::kOutcomeCount + o;
    for (size_t b = 0; b < buckets_; ++b) {
      sum += all[c * buckets_ + b];
    }
  }
  return sum;
}

double Tally::expected_total() const {
  std::vector<double> all = totals();
  double sum = 0;
  for (double v : all) {
    sum += v;
  }
  return sum;
}

std::vector<record::TimeBucket> Tally::sample(Random& random, double rate) const {
  std::vector<double> all = totals();
  std::vector<record::TimeBucket> out(buckets_);
  for (size_t b = 0; b < buckets_; ++b) {
    record::TimeBucket& bucket = out[b];
    double start = b * width_, stop = std::min(end_, (b + 1) * width_);
    bucket.start = record::Micros(std::llround(start * 1e6));
    bucket.width = record::Micros(std::llround((stop - start) * 1e6));
    bucket.requests = random.poisson(rate * (stop - start));
    uint64_t failed = 0;
    for (size_t c = 0; c < kCells; ++c) {
      uint64_t n = random.poisson(all[c * buckets_ + b]);
      bucket.failures_by_hole[c / record::kOutcomeCount] += n;
      bucket.outcomes[c % record::kOutcomeCount] += n;
      failed += n;
    }
    // Failures are requests too: a failure count above the drawn total raises the total.
    bucket.requests = std::max(bucket.requests, failed);
    bucket.outcomes[static_cast<size_t>(record::Outcome::ok)] = bucket.requests - failed;
  }
  return out;
}

}  // namespace zerodrop::sim
