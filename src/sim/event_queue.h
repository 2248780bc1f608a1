#pragma once

#include <cstdint>
#include <functional>
#include <queue>
#include <vector>

namespace zerodrop::sim {

// The discrete-event core: actions run in time order; equal times run in the order they were
// scheduled, so a run depends only on its inputs and seed. Virtual seconds; single-threaded.
class EventQueue {
public:
  using Action = std::function<void()>;

  // Schedules `action` at `time` (clamped to now: nothing runs in the past).
  void at(double time, Action action);
  // Runs every action in order, including those scheduled while running. Returns the count.
  uint64_t run();

  double now() const { return now_; }

private:
  struct Item {
    double time;
    uint64_t seq;
    Action action;

    bool operator>(const Item& other) const {
      return time != other.time ? time > other.time : seq > other.seq;
    }
  };

  std::priority_queue<Item, std::vector<Item>, std::greater<>> items_;
  uint64_t next_seq_ = 0;
  double now_ = 0;
};

// A token bucket with reservations (golang.org/x/time/rate's Wait, which client-go's QPS/burst
// limiter uses): grants in call order; calls must come in non-decreasing time.
class TokenBucket {
public:
  TokenBucket(double qps, double burst) : qps_(qps), burst_(burst), tokens_(burst) {}

  // The time at which a request made at `time` gets its token.
  double acquire(double time);

private:
  double qps_;
  double burst_;
  double tokens_;
  double last_ = 0;
};

}  // namespace zerodrop::sim
