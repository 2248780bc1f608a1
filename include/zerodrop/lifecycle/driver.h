#pragma once

#include <boost/asio/io_context.hpp>
#include <boost/asio/post.hpp>
#include <boost/asio/signal_set.hpp>
#include <boost/asio/steady_timer.hpp>

#include "zerodrop/lifecycle/shutdown.h"

namespace zerodrop::lifecycle {

// Drives a Shutdown with real signals and timers on an io_context: the first of
// Options::signals begins the shutdown, a timer applies the delay and the deadline, and both
// are cancelled when the machine stops so that io_context::run() can return. Later signals are
// swallowed (they must not kill a draining server). Both objects must outlive io_context::run().
class Driver {
public:
  Driver(boost::asio::io_context& io, Shutdown& shutdown)
      : io_(io), shutdown_(shutdown), signals_(io), timer_(io) {
    shutdown_.on_stopped([this](StopReason) {
      boost::asio::post(io_, [this] {
        signals_.cancel();
        timer_.cancel();
      });
    });
  }

  // Installs the signal handlers. Call once, before io_context::run().
  void start() {
    for (int signal : shutdown_.options().signals) {
      signals_.add(signal);
    }
    wait_for_signal();
  }

  // Begins the shutdown now, as if a signal had arrived (e.g. an admin endpoint). Call on the
  // io_context's thread.
  void trigger() {
    if (shutdown_.begin(Clock::now())) {
      schedule();
    }
  }

  // The signal that began the shutdown; 0 when none (or trigger()).
  int signal() const { return signal_; }

private:
  void wait_for_signal() {
    signals_.async_wait([this](const boost::system::error_code& ec, int signal) {
      if (ec) {
        return;
      }
      if (signal_ == 0) {
        signal_ = signal;
      }
      trigger();
      wait_for_signal();
    });
  }

  void schedule() {
    std::optional<Clock::time_point> at = shutdown_.next_timer();
    if (!at) {
      return;
    }
    timer_.expires_at(*at);
    timer_.async_wait([this](const boost::system::error_code& ec) {
      if (ec) {
        return;
      }
      shutdown_.advance(Clock::now());
      schedule();
    });
  }

  boost::asio::io_context& io_;
  Shutdown& shutdown_;
  boost::asio::signal_set signals_;
  boost::asio::steady_timer timer_;
  int signal_ = 0;
};

}  // namespace zerodrop::lifecycle
