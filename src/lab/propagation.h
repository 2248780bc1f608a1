#pragma once

#include <random>
#include <string>
#include <string_view>

#include "base/duration.h"

namespace zerodrop::lab {

// How long a router (a node's kube-proxy, an ingress) takes to apply an endpoint change:
// `2s` (fixed), `1s..4s` (uniform), `p50=1s,p99=6s` (log-normal through those quantiles).
struct Propagation {
  enum class Kind { fixed, uniform, lognormal };
  Kind kind = Kind::fixed;
  Duration a{0};  // fixed value, uniform low end, or p50
  Duration b{0};  // uniform high end, or p99
  std::string describe() const;
  // Draws one delay.
  Duration sample(std::mt19937_64& rng) const;
};

// Throws Error naming `what` ("--propagation") on anything else, or when low > high / p50 > p99.
Propagation parse_propagation(std::string_view text, std::string_view what);

}  // namespace zerodrop::lab
