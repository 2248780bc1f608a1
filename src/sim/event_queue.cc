#include "sim/event_queue.h"

#include <algorithm>
#include <limits>

namespace zerodrop::sim {

void EventQueue::at(double time, Action action) {
  items_.push(Item{std::max(time, now_), next_seq_++, std::move(action)});
}

uint64_t EventQueue::run() {
  uint64_t count = 0;
  while (!items_.empty()) {
    // Move the action out before popping: it may schedule more.
    Item item = std::move(const_cast<Item&>(items_.top()));
    items_.pop();
    now_ = item.time;
    item.action();
    ++count;
  }
  return count;
}

double TokenBucket::acquire(double time) {
  if (qps_ <= 0) {
    return time;  // unlimited
  }
  time = std::max(time, last_);
  tokens_ = std::min(burst_, tokens_ + (time - last_) * qps_);
  last_ = time;
  tokens_ -= 1;
  return tokens_ >= 0 ? time : time + (-tokens_) / qps_;
}

}  // namespace zerodrop::sim
