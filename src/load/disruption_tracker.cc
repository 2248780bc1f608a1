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

DisruptionTracker::Failures DisruptionTracker::failures() const {
  // A stretch runs from the first failing slot after a success to the last failing slot before
  // the next success; slots where no request was intended neither extend nor break it. A slot
  // holding a failure counts for first/last even when it also holds a success.
  size_t longest = 0;
  size_t longest_start = 0;
  bool in_stretch = false;
  size_t start = 0;
  bool any = false;
  size_t first_failure = 0;
  size_t last_failure = 0;
  for (size_t i = 0; i < slots_; ++i) {
    uint8_t f = flags_[i].load(std::memory_order_relaxed);
    if (f & kFailure) {
      first_failure = any ? first_failure : i;
      last_failure = i;
      any = true;
    }
    if (f & kSuccess) {
      in_stretch = false;
    } else if (f == kFailure) {
      start = in_stretch ? start : i;
      in_stretch = true;
      if (i - start + 1 > longest) {
        longest = i - start + 1;
        longest_start = start;
      }
    }
  }
  auto at = [this](size_t slots) {
    return to_seconds(width_ * static_cast<int64_t>(slots));
  };
  if (!any) {
    return {};
  }
  return {at(longest), at(longest_start), at(first_failure), at(last_failure + 1)};
}

}  // namespace zerodrop::load
