#include "sim/random.h"

#include <cmath>
#include <numbers>

namespace zerodrop::sim {

double Random::exponential(double mean) {
  return -mean * std::log1p(-uniform());
}

double Random::normal() {
  if (has_spare_) {
    has_spare_ = false;
    return spare_normal_;
  }
  double u1 = 1.0 - uniform();  // (0, 1]: log stays finite
  double u2 = uniform();
  double radius = std::sqrt(-2.0 * std::log(u1));
  spare_normal_ = radius * std::sin(2 * std::numbers::pi * u2);
  has_spare_ = true;
  return radius * std::cos(2 * std::numbers::pi * u2);
}

double Random::lognormal(double mu, double sigma) {
  return std::exp(mu + sigma * normal());
}

uint64_t Random::poisson(double mean) {
  if (mean <= 0) {
    return 0;
  }
  if (mean < 30) {
    // Knuth: multiply uniforms until the product drops below e^-mean.
    double limit = std::exp(-mean);
    double product = uniform();
    uint64_t count = 0;
    while (product > limit) {
      ++count;
      product *= uniform();
    }
    return count;
  }
  double x = std::round(mean + std::sqrt(mean) * normal());
  return x <= 0 ? 0 : static_cast<uint64_t>(x);
}

}  // namespace zerodrop::sim
