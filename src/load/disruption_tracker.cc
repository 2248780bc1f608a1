#include "load/disruption_tracker.h"

#include <algorithm>

namespace zerodrop::load {
namespace {

constexpr size_t kMaxSlots = 1'000'000;
constexpr uint8_t kSuccess = 1;
constexpr uint8_t kFailure = 2;

}  // namespace

DisruptionTracker::DisruptionTracker(Duration duration) {
  width_ = std::max<Duration>(std::chrono::milliseconds(1), duration / kMaxSlots);
  slots_ = static_cast<size_t>(duration / width_) + 1;
  slots_ = std::min(slots_, kMaxSlots + 1);
  flags_ = std::make_unique<std::atomic<uint8_t>[]>(slots_);
  for (size_t i = 0; i < slots_; ++i) {
    flags_[i].store(0, std::memory_order_relaxed);
  }
}

void DisruptionTracker::add(Duration intended, bool failed) {
  auto slot = static_cast<size_t>(std::max<int64_t>(intended / width_, 0));
  slot = std::min(slot, slots_ - 1);
  flags_[slot].fetch_or(failed ? kFailure : kSuccess, std::memory_order_relaxed);
}

double DisruptionTracker::longest_s() const {
  // A stretch runs from the first failing slot after a success to the last failing slot before
  // the next success; slots where no request was intended neither extend nor break it.
  size_t longest = 0;
  bool in_stretch = false;
  size_t first = 0;
  for (size_t i = 0; i < slots_; ++i) {
    uint8_t f = flags_[i].load(std::memory_order_relaxed);
    if (f & kSuccess) {
      in_stretch = false;
    } else if (f == kFailure) {
      first = in_stretch ? first : i;
      in_stretch = true;
      longest = std::max(longest, i - first + 1);
    }
  }
  return to_seconds(width_ * static_cast<int64_t>(longest));
}

}  // namespace zerodrop::load
