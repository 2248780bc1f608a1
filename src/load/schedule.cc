#include "load/schedule.h"

#include <cmath>

namespace zerodrop::load {

TimePoint Schedule::intended(uint64_t local) const {
  double seconds = static_cast<double>(global_index(local)) / rate;
  return start + std::chrono::nanoseconds(std::llround(seconds * 1e9));
}

// A timer wake per request costs more CPU than the request at thousands per second; one wake for
// the requests of a window costs the first of them up to the window of delay, which its latency
// (from its intended time) shows.
TimePoint Schedule::wake_for(uint64_t next) const {
  if (next >= limit) {
    return end;
  }
  TimePoint first = intended(next);
  if (first >= end) {
    return end;
  }
  TimePoint wake = first;
  for (uint64_t k = next + 1; k < limit; ++k) {
    TimePoint t = intended(k);
    if (t - first >= window || t >= end) {
      break;
    }
    wake = t;
  }
  return wake;
}

}  // namespace zerodrop::load
