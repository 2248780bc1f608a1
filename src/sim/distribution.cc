#include "sim/distribution.h"

#include <cmath>

#include <fmt/format.h>

#include "base/duration.h"
#include "base/error.h"
#include "base/text.h"

namespace zerodrop::sim {
namespace {

constexpr double kZ99 = 2.3263478740408408;  // the standard normal's 99th percentile

double normal_cdf(double x) {
  return 0.5 * std::erfc(-x / std::sqrt(2.0));
}

double seconds_of(std::string_view text, std::string_view what) {
  return to_seconds(parse_duration(trim(text), what));
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

Distribution parse_distribution(std::string_view text, std::string_view what) {
  text = trim(text);
  if (auto dots = text.find(".."); dots != std::string_view::npos) {
    double low = seconds_of(text.substr(0, dots), what);
    double high = seconds_of(text.substr(dots + 2), what);
    if (high < low) {
      throw Error(fmt::format("{}: range '{}' ends before it starts", what, text));
    }
    return Distribution::uniform(low, high);
  }
  if (text.starts_with("p50=")) {
    auto parts = split(text, ',');
    if (parts.size() != 2 || !trim(parts[1]).starts_with("p99=")) {
      throw Error(fmt::format("{}: expected 'p50=D,p99=D', got '{}'", what, text));
    }
    double p50 = seconds_of(parts[0].substr(4), what);
    double p99 = seconds_of(trim(parts[1]).substr(4), what);
    if (p50 <= 0 || p99 < p50) {
      throw Error(fmt::format("{}: need 0 < p50 <= p99, got '{}'", what, text));
    }
    return Distribution::quantiles(p50, p99);
  }
  return Distribution::fixed(seconds_of(text, what));
}

}  // namespace zerodrop::sim
