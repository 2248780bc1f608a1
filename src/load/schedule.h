#pragma once

#include <chrono>
#include <cstdint>

#include "load/stream.h"

namespace zerodrop::load {

// One worker's share of the open-loop schedule: worker `index` of `count` sends the requests
// whose global index k satisfies k % count == index, request k intended at start + k / rate.
// Its requests are numbered locally 0, 1, 2, …; `limit` of them at most (--requests).
struct Schedule {
  TimePoint start{};
  TimePoint end{};
  double rate = 0;
  uint32_t index = 0;
  uint32_t count = 1;
  uint64_t limit = UINT64_MAX;
  // Requests intended less than this after the next one go out with it, at one timer wake.
  std::chrono::nanoseconds window{0};

  uint64_t global_index(uint64_t local) const { return local * count + index; }

  TimePoint intended(uint64_t local) const;
  // When the pacer wakes for local request `next`, the first not yet due: at the intended time
  // of the last request due within the window after it and before the end (so that none leaves
  // before its intended time), `end` when no request is left before the end.
  TimePoint wake_for(uint64_t next) const;
};

}  // namespace zerodrop::load
