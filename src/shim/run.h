#pragma once

#include <chrono>
#include <optional>
#include <string>
#include <vector>

#include "shim/ready_server.h"

namespace zerodrop::shim {

// What `zerodrop run` does; durations are measured from the stop signal (SIGTERM or SIGINT).
struct RunOptions {
  std::vector<std::string> command;                                   // the app and its arguments
  std::chrono::nanoseconds delay = std::chrono::seconds(10);          // readiness fails, app serves
  std::chrono::nanoseconds drain_timeout = std::chrono::seconds(20);  // SIGKILL to the app's group
  int stop_signal = 15;                                               // passed after the delay
  std::optional<ListenAddress> ready;     // the readiness endpoint; none = off
  std::optional<HttpUrl> app_ready;       // mirrored by the readiness endpoint while serving
  std::optional<ListenAddress> listen;    // front proxy: where clients connect
  std::optional<ListenAddress> upstream;  // front proxy: the app
  std::chrono::nanoseconds h2_goaway_delay = std::chrono::seconds(1);  // front proxy: GOAWAY gap
};

// Runs the app as a drain-aware PID 1 until it exits. Forwards every other catchable signal to
// the app's process group, reaps zombies, and returns the app's exit code (128+N when signal N
// ended it; 137 after the drain-timeout kill). Throws Error when the app cannot be started or a
// port cannot be bound. Progress lines go to stderr, prefixed "zerodrop run: ".
int run(const RunOptions& options);

}  // namespace zerodrop::shim
