#include "cli/stop_signals.h"

#include <signal.h>

namespace zerodrop::cli {
namespace stop_signals {
namespace {

std::atomic<bool> stop_requested{false};
static_assert(std::atomic<bool>::is_always_lock_free);  // stored from a signal handler

extern "C" void on_stop_signal(int) {
  stop_requested.store(true);
}

}  // namespace
}  // namespace stop_signals

const std::atomic<bool>* catch_stop_signals(SecondSignal second) {
  struct sigaction action {};

  action.sa_handler = stop_signals::on_stop_signal;
  action.sa_flags = second == SecondSignal::kills ? SA_RESETHAND : 0;
  sigemptyset(&action.sa_mask);
  sigaction(SIGINT, &action, nullptr);
  sigaction(SIGTERM, &action, nullptr);
  return &stop_signals::stop_requested;
}

}  // namespace zerodrop::cli
