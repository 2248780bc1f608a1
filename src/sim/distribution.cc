#include "sim/distribution.h"

#include <cmath>

#include <fmt/format.h>

#include "base/duration.h"

namespace zerodrop::sim {
namespace {

double normal_cdf(double x) {
  return 0.5 * std::erfc(-x / std::sqrt(2.0));
}

}  // namespace

Distribution Distribution::quantiles(double p50, double p99) {
  return {Kind::lognormal, std::log(p50), (std::log(p99) - std::log(p50)) / kZ99};
}

double Distribution::sample(Random& random) const {
  switch (kind) {
    case Kind::fixed:
      return a;
    case Kind::uniform:
      return random.uniform(a, b);
    case Kind::lognormal:
      return random.lognormal(a, b);
  }
  return a;
}

double Distribution::mean() const {
  switch (kind) {
    case Kind::fixed:
      return a;
    case Kind::uniform:
      return (a + b) / 2;
    case Kind::lognormal:
      return std::exp(a + b * b / 2);
  }
  return a;
}

double Distribution::median() const {
  switch (kind) {
    case Kind::fixed:
      return a;
    case Kind::uniform:
      return (a + b) / 2;
    case Kind::lognormal:
      return std::exp(a);
  }
  return a;
}

double Distribution::excess(double g) const {
  switch (kind) {
    case Kind::fixed:
      return std::max(a - g, 0.0);
    case Kind::uniform: {
      if (g <= a) {
        return mean() - g;
      }
      if (g >= b) {
        return 0;
      }
      return (b - g) * (b - g) / (2 * (b - a));
    }
    case Kind::lognormal: {
      if (g <= 0) {
        return mean() - g;
      }
      if (b == 0) {
        return std::max(std::exp(a) - g, 0.0);
      }
      // The lognormal's partial expectation (Black-Scholes form).
      double d1 = (a + b * b - std::log(g)) / b;
      return mean() * normal_cdf(d1) - g * normal_cdf(d1 - b);
    }
  }
  return 0;
}

std::string Distribution::to_string() const {
  auto text = [](double s) {
    return format_duration(from_seconds(s));
  };
  switch (kind) {
    case Kind::fixed:
      return text(a);
    case Kind::uniform:
      return text(a) + ".." + text(b);
    case Kind::lognormal:
      return fmt::format("p50={},p99={}", text(std::exp(a)), text(std::exp(a + kZ99 * b)));
  }
  return "";
}

Distribution Distribution::of(const DelayDistribution& d) {
  switch (d.kind) {
    case DelayDistribution::Kind::fixed:
      return fixed(to_seconds(d.a));
    case DelayDistribution::Kind::uniform:
      return uniform(to_seconds(d.a), to_seconds(d.b));
    case DelayDistribution::Kind::lognormal:
      return quantiles(to_seconds(d.a), to_seconds(d.b));
  }
  return fixed(to_seconds(d.a));
}

Distribution parse_distribution(std::string_view text, std::string_view what) {
  return Distribution::of(parse_delay_distribution(text, what));
}

}  // namespace zerodrop::sim
