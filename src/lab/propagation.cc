#include "lab/propagation.h"

#include <cmath>

#include <fmt/format.h>

#include "base/error.h"

namespace zerodrop::lab {
namespace {

constexpr double kZ99 = 2.3263478740408408;  // the standard normal's 0.99 quantile

[[noreturn]] void bad(std::string_view text, std::string_view what) {
  throw Error(fmt::format("{}: expected 2s, 1s..4s or p50=1s,p99=6s, got '{}'", what, text));
}

}  // namespace

std::string Propagation::describe() const {
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

Duration Propagation::sample(std::mt19937_64& rng) const {
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

Propagation parse_propagation(std::string_view text, std::string_view what) {
  Propagation p;
  if (size_t dots = text.find(".."); dots != std::string_view::npos) {
    p.kind = Propagation::Kind::uniform;
    p.a = parse_duration(text.substr(0, dots), what);
    p.b = parse_duration(text.substr(dots + 2), what);
  } else if (text.starts_with("p50=")) {
    size_t comma = text.find(",p99=");
    if (comma == std::string_view::npos) {
      bad(text, what);
    }
    p.kind = Propagation::Kind::lognormal;
    p.a = parse_duration(text.substr(4, comma - 4), what);
    p.b = parse_duration(text.substr(comma + 5), what);
    if (p.a.count() == 0) {
      throw Error(fmt::format("{}: p50 must be above zero, got '{}'", what, text));
    }
  } else {
    try {
      p.a = parse_duration(text, what);
    } catch (const Error&) {
      bad(text, what);
    }
  }
  if (p.kind != Propagation::Kind::fixed && p.a > p.b) {
    throw Error(fmt::format("{}: the first bound is above the second in '{}'", what, text));
  }
  return p;
}

}  // namespace zerodrop::lab
