#pragma once

#include <random>
#include <string>
#include <string_view>

#include "base/duration.h"

namespace zerodrop {

// The standard normal's 0.99 quantile: turns a p50/p99 pair into a log-normal's sigma.
inline constexpr double kZ99 = 2.3263478740408408;

// A distribution of delays, in the grammar every engine reads: `2s` (fixed), `1s..4s`
// (uniform) or `p50=1s,p99=6s` (log-normal through those quantiles). The lab samples it with
// sample(); the sim converts it to its own units (sim/distribution.h).
struct DelayDistribution {
  enum class Kind { fixed, uniform, lognormal };
  Kind kind = Kind::fixed;
  Duration a{0};  // fixed value, uniform low end, or p50
  Duration b{0};  // uniform high end, or p99

  static DelayDistribution fixed(Duration d) { return {Kind::fixed, d, {}}; }

  static DelayDistribution uniform(Duration low, Duration high) {
    return {Kind::uniform, low, high};
  }

  static DelayDistribution quantiles(Duration p50, Duration p99) {
    return {Kind::lognormal, p50, p99};
  }

  // The text parse_delay_distribution() reads back: "2s", "1s..4s", "p50=1s,p99=6s".
  std::string to_string() const;
  // Draws one delay.
  Duration sample(std::mt19937_64& rng) const;
};

// Parses the three forms (any duration parse_duration reads, spaces around them ignored).
// Throws Error "<what>: …" naming the culprit on anything else, when a range ends before it
// starts, or unless 0 < p50 <= p99.
DelayDistribution parse_delay_distribution(std::string_view text, std::string_view what);

}  // namespace zerodrop
