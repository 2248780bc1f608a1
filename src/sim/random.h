#pragma once

#include <cstdint>
#include <random>

namespace zerodrop::sim {

// The simulator's one source of randomness: a seeded 64-bit Mersenne Twister (whose output the
// C++ standard fixes) with the distributions written here, because std:: distributions may
// differ between standard libraries and the same seed must give the same run everywhere.
// Not thread-safe; each run owns one.
class Random {
public:
  explicit Random(uint64_t seed) : engine_(seed) {}

  // Uniform in [0, 1).
  double uniform() { return static_cast<double>(engine_() >> 11) * 0x1.0p-53; }

  double uniform(double low, double high) { return low + (high - low) * uniform(); }

  // A whole number in [0, n).
  uint64_t below(uint64_t n) { return static_cast<uint64_t>(uniform() * static_cast<double>(n)); }

  double exponential(double mean);
  double normal();  // standard normal (Box-Muller)
  double lognormal(double mu, double sigma);
  // A Poisson count with the given mean: exact below 30, normal approximation above (rounded,
  // clamped at 0), which is within 1% of the exact distribution there and O(1).
  uint64_t poisson(double mean);

  // A new generator whose stream depends on this one and on `salt` (one per node, per run).
  Random fork(uint64_t salt) { return Random(engine_() ^ (salt * 0x9E3779B97F4A7C15ULL)); }

private:
  std::mt19937_64 engine_;
  double spare_normal_ = 0;
  bool has_spare_ = false;
};

}  // namespace zerodrop::sim
