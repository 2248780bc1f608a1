#pragma once

#include <cstdint>

#include "load/stream.h"

namespace zerodrop::load {

// One connection slot as the worker drives it: HTTP/1.1 (one request at a time) or HTTP/2 (up
// to --streams at once). A session reports every request it accepted back to its worker exactly
// once (Worker::on_finished, or Worker::on_unprocessed for a resend). Used from one thread.
class Session {
public:
  // idle: connected and able to take a request now; busy: connected, full or draining.
  enum class State : uint8_t { closed, connecting, idle, busy };

  virtual ~Session() = default;

  // Sends `request` now: on this connection when idle, else after opening one.
  virtual void start(const Request& request, TimePoint now) = 0;
  // Ends requests whose deadline (connect or response) has passed.
  virtual void expire_if_due(TimePoint now) = 0;
  // Closes the connection without recording anything (idle connections at the end of the run).
  virtual void close() = 0;
  // Requests accepted and not yet reported.
  virtual uint32_t active() const = 0;

  State state() const { return state_; }

  uint32_t endpoint() const { return endpoint_; }

  bool in_idle_list = false;  // the worker's bookkeeping of its free lists
  bool in_closed_list = false;

protected:
  State state_ = State::closed;
  uint32_t endpoint_ = 0;
};

}  // namespace zerodrop::load
