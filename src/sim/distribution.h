#pragma once

#include <string>
#include <string_view>

#include "base/delay_distribution.h"
#include "sim/random.h"

namespace zerodrop::sim {

// A distribution of a duration in virtual seconds: the sim's form of a DelayDistribution (the
// grammar "2s", "1s..3s", "p50=1s,p99=6s" every engine reads), converted at the sim's boundary.
struct Distribution {
  enum class Kind { fixed, uniform, lognormal };
  Kind kind = Kind::fixed;
  double a = 0;  // fixed: the value; uniform: low; lognormal: mu (log of the median)
  double b = 0;  // uniform: high; lognormal: sigma

  static Distribution fixed(double seconds) { return {Kind::fixed, seconds, 0}; }

  static Distribution uniform(double low, double high) { return {Kind::uniform, low, high}; }

  // Log-normal with the given median and 99th percentile (p99 >= p50 > 0).
  static Distribution quantiles(double p50, double p99);

  // The same distribution in seconds.
  static Distribution of(const DelayDistribution& d);

  double sample(Random& random) const;
  double mean() const;
  double median() const;
  // E[max(X - g, 0)]: the expected part of a duration that outlasts `g` seconds.
  double excess(double g) const;
  // The text parse() reads back.
  std::string to_string() const;
};

// parse_delay_distribution() in the sim's units. Throws Error "<what>: …" naming the culprit.
Distribution parse_distribution(std::string_view text, std::string_view what);

}  // namespace zerodrop::sim
