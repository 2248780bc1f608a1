#pragma once

#include <cstdint>
#include <string>
#include <string_view>

#include "base/parse.h"

namespace zerodrop {

// Kubernetes' intstr for counts: an absolute "2" or a "25%" of a total, parsed once (at the flag
// or the manifest) and resolved against the total where it is used. maxSurge rounds up,
// maxUnavailable and PDB percentages round down, as the controllers do.
class IntOrPercent {
 public:
  enum class Unit { count, percent };

  constexpr IntOrPercent() = default;
  static constexpr IntOrPercent count(int64_t n) { return IntOrPercent(n, Unit::count); }
  static constexpr IntOrPercent percent(int64_t p) { return IntOrPercent(p, Unit::percent); }

  // "2" or "25%"; throws Error "<what>: expected …, got '<text>'". Percent 0..100.
  static IntOrPercent parse(std::string_view text, std::string_view what);

  // Kubernetes' GetScaledValueFromIntOrPercent: integer arithmetic, rounded as asked.
  int64_t resolve(int64_t total, Round round) const;

  int64_t value() const { return value_; }
  Unit unit() const { return unit_; }
  std::string to_string() const;  // "2" or "25%", what parse() reads back

  friend bool operator==(const IntOrPercent&, const IntOrPercent&) = default;

 private:
  constexpr IntOrPercent(int64_t value, Unit unit) : value_(value), unit_(unit) {}
  int64_t value_ = 0;
  Unit unit_ = Unit::count;
};

}  // namespace zerodrop
