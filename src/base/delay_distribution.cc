#include "base/delay_distribution.h"

#include <cmath>

#include <fmt/format.h>

#include "base/error.h"
#include "base/text.h"

namespace zerodrop {
namespace {

[[noreturn]] void bad(std::string_view text, std::string_view what) {
  throw Error(fmt::format("{}: expected 2s, 1s..4s or p50=1s,p99=6s, got '{}'", what, text));
}

Duration duration_of(std::string_view text, std::string_view what) {
  return parse_duration(trim(text), what);
}

}  // namespace

std::string DelayDistribution::to_string() const {
  switch (kind) {
    case Kind::fixed:
      return format_duration(a);
    case Kind::uniform:
      return format_duration(a) + ".." + format_duration(b);
    case Kind::lognormal:
      return "p50=" + format_duration(a) + ",p99=" + format_duration(b);
  }
  return "";
}

Duration DelayDistribution::sample(std::mt19937_64& rng) const {
  switch (kind) {
    case Kind::fixed:
      return a;
    case Kind::uniform: {
      std::uniform_int_distribution<Duration::rep> pick(a.count(), b.count());
      return Duration(pick(rng));
    }
    case Kind::lognormal: {
      if (a == b) {
        return a;  // sigma would be 0, outside lognormal_distribution's domain
      }
      double mu = std::log(to_seconds(a));
      double sigma = (std::log(to_seconds(b)) - mu) / kZ99;
      std::lognormal_distribution<double> pick(mu, sigma);
      return from_seconds(pick(rng));
    }
  }
  return a;
}

DelayDistribution parse_delay_distribution(std::string_view text, std::string_view what) {
  text = trim(text);
  if (size_t dots = text.find(".."); dots != std::string_view::npos) {
    DelayDistribution d = DelayDistribution::uniform(duration_of(text.substr(0, dots), what),
                                                     duration_of(text.substr(dots + 2), what));
    if (d.b < d.a) {
      throw Error(fmt::format("{}: range '{}' ends before it starts", what, text));
    }
    return d;
  }
  if (text.starts_with("p50=")) {
    size_t comma = text.find(',');
    if (comma == std::string_view::npos || !trim(text.substr(comma + 1)).starts_with("p99=")) {
      bad(text, what);
    }
    Duration p50 = duration_of(text.substr(4, comma - 4), what);
    Duration p99 = duration_of(trim(text.substr(comma + 1)).substr(4), what);
    if (p50 <= Duration(0) || p99 < p50) {
      throw Error(fmt::format("{}: need 0 < p50 <= p99, got '{}'", what, text));
    }
    return DelayDistribution::quantiles(p50, p99);
  }
  try {
    return DelayDistribution::fixed(duration_of(text, what));
  } catch (const Error&) {
    bad(text, what);
  }
}

}  // namespace zerodrop
