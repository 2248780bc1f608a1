#pragma once

#include <atomic>
#include <chrono>
#include <cstdint>
#include <memory>

#include "base/duration.h"

namespace zerodrop::load {

// Finds the longest stretch of consecutive failures ("disruption") on the timeline of intended
// send times, whatever order requests complete in. The run is cut into at most 1,000,000 slots of
// at least 1 ms; a slot is failing when it holds a failure and no success; the disruption is the
// longest span from a failing slot to a later one with no successful slot between them. Memory is
// fixed by the duration (1 byte a slot, at most 1 MB), never by the number of requests. add() is
// thread-safe and lock-free.
class DisruptionTracker {
public:
  explicit DisruptionTracker(Duration duration);

  // Where failures fell on the timeline, in seconds since the run's start (multiples of the slot
  // width). All zero when nothing failed.
  struct Failures {
    double longest_s = 0;        // the longest stretch (the disruption)
    double longest_start_s = 0;  // where it began
    double first_s = 0;          // the first failing slot
    double last_s = 0;           // the end of the last failing slot
  };

  // Notes one finished request by its intended send time since the run's start.
  void add(Duration intended, bool failed);
  Failures failures() const;

  double longest_s() const { return failures().longest_s; }

  Duration slot_width() const { return width_; }

private:
  Duration width_;
  size_t slots_;
  std::unique_ptr<std::atomic<uint8_t>[]> flags_;
};

}  // namespace zerodrop::load
