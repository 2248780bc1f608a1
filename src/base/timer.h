#pragma once

#include <cstdint>
#include <functional>
#include <map>
#include <utility>

#include <boost/asio/execution_context.hpp>
#include <boost/asio/io_context.hpp>
#include <boost/asio/steady_timer.hpp>

#include "base/clock.h"
#include "base/duration.h"

namespace zerodrop {

// Virtual time for the Timers of one io_context. A test installs it with
// `boost::asio::make_service<VirtualTime>(io, fake_clock)`; from then on those Timers wait on the
// FakeClock, and advance() fires them in time order, each with the clock at its instant. Use it
// from the io_context's thread only.
class VirtualTime : public boost::asio::execution_context::service {
public:
  using Handler = std::function<void(boost::system::error_code)>;
  inline static boost::asio::execution_context::id id;

  explicit VirtualTime(boost::asio::io_context& io);

  // The virtual clock, for what stamps events (a Recorder) in the same time.
  const Clock& clock() const { return clock_; }

  Clock::time_point now() const { return clock_.now(); }

  // Moves the clock `d` forward: runs every handler ready now, then every wait due by then in
  // order of expiry (ties in the order they were armed), then what is ready at the end.
  void advance(Duration d);

  // For Timer: arms a wait (returns its id) and cancels one (its handler gets operation_aborted).
  uint64_t arm(Clock::time_point at, Handler handler);
  void cancel(uint64_t wait);

private:
  struct Wait {
    Clock::time_point at;
    Handler handler;
  };

  void shutdown() override { waits_.clear(); }

  void run_ready();

  boost::asio::io_context& io_;
  FakeClock clock_;
  uint64_t next_id_ = 1;
  std::map<uint64_t, Wait> waits_;  // by id, which is the arming order
};

// A one-shot timer with the part of asio::steady_timer's interface the lab uses. Without
// VirtualTime on its io_context it is a steady_timer; with it, it waits in virtual time.
class Timer {
public:
  explicit Timer(boost::asio::io_context& io);
  ~Timer();
  Timer(const Timer&) = delete;
  Timer& operator=(const Timer&) = delete;

  // The time Timers of `io` measure: the steady clock, or the virtual time installed on it.
  static Clock::time_point now(boost::asio::io_context& io);

  // Sets the expiry `d` from now and cancels a pending wait, like steady_timer::expires_after.
  void expires_after(Duration d);
  // `handler(error_code)` runs on the io_context: success at expiry, operation_aborted if
  // cancelled first.
  template <typename Handler>
  void async_wait(Handler handler);
  void cancel();

private:
  boost::asio::steady_timer steady_;
  VirtualTime* virtual_ = nullptr;
  Clock::time_point expiry_{};
  uint64_t wait_ = 0;  // the pending virtual wait, 0 = none
};

template <typename Handler>
void Timer::async_wait(Handler handler) {
  if (virtual_ == nullptr) {
    steady_.async_wait(std::move(handler));
    return;
  }
  wait_ = virtual_->arm(expiry_, std::move(handler));
}

}  // namespace zerodrop
