#pragma once

#include <chrono>

namespace zerodrop {

// A monotonic clock that tests can replace. Thread-safe for concurrent now() calls.
class Clock {
public:
  using time_point = std::chrono::steady_clock::time_point;
  virtual ~Clock() = default;
  virtual time_point now() const = 0;
};

// The real steady clock.
class SteadyClock final : public Clock {
public:
  time_point now() const override { return std::chrono::steady_clock::now(); }
};

// A clock that moves only when told to. Not thread-safe: drive it from the test's thread.
class FakeClock final : public Clock {
public:
  time_point now() const override { return now_; }
  void advance(std::chrono::nanoseconds d) { now_ += d; }

private:
  time_point now_{std::chrono::seconds(1000)};
};

}  // namespace zerodrop
