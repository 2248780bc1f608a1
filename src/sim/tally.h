#pragma once

#include <array>
#include <cstdint>
#include <vector>

#include "record/run_record.h"
#include "sim/random.h"

namespace zerodrop::sim {

// Expected failure counts per time bucket, hole and outcome class. Windows of constant rate are
// added in O(1) (a difference array over whole buckets); sampling draws one Poisson count per
// cell, which is exact because a sum of independent Poisson counts is Poisson with the summed
// mean.
class Tally {
public:
  Tally(double end, double width);

  // Failures arriving at `per_second` over [from, to), clipped to the run.
  void add_window(double from, double to, double per_second, record::Hole hole,
                  record::Outcome outcome);
  // `mean` failures at the instant `t`.
  void add_point(double t, double mean, record::Hole hole, record::Outcome outcome);

  double expected(record::Hole hole) const;
  double expected_total() const;

  size_t buckets() const { return buckets_; }

  double width() const { return width_; }

  // The run's buckets: requests drawn at `rate`, failures drawn per cell, ok = the rest.
  std::vector<record::TimeBucket> sample(Random& random, double rate) const;

private:
  size_t cell(record::Hole hole, record::Outcome outcome) const;
  size_t bucket_of(double t) const;
  std::vector<double> totals() const;  // [cell][bucket] means, windows integrated

  double end_;
  double width_;
  size_t buckets_;
  std::vector<double> direct_;  // [cell][bucket]: partial buckets and points
  std::vector<double> full_;    // [cell][bucket]: difference array of whole-bucket means
};

}  // namespace zerodrop::sim
