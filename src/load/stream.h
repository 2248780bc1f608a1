#pragma once

#include <chrono>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

#include "record/outcome.h"
#include "record/run_record.h"

namespace zerodrop::load {

using TimePoint = std::chrono::steady_clock::time_point;

// How an earlier attempt of a resent request ended (HTTP/2: refused unprocessed).
struct FirstAttempt {
  record::Outcome outcome = record::Outcome::ok;
  uint32_t conn = 0;
  uint32_t stream = 0;
  TimePoint done{};
};

// One request the pacer hands to a session.
struct Request {
  uint64_t seq = 0;
  uint32_t target = 0;
  TimePoint intended;
  uint8_t attempt = 1;  // 2 when resent (HTTP/2: refused unprocessed; --client-retry)
  std::optional<FirstAttempt> first_attempt;  // HTTP/2: set when attempt is 2
  bool client_resend = false;  // --client-retry's resend: goes out on a new connection
};

// One request on a connection, from the hand-over to its end: what the worker records.
struct Stream {
  Request request;
  TimePoint sent{};
  TimePoint first_byte{};
  TimePoint deadline{};
  std::string error;  // the system's or the protocol's words for a failure
  bool has_sent = false;
  bool has_first_byte = false;

  // Starts the stream of `r`: no time, no error yet.
  void begin(const Request& r) {
    request = r;
    has_sent = has_first_byte = false;
    error.clear();
  }

  std::optional<TimePoint> sent_at() const { return has_sent ? std::optional(sent) : std::nullopt; }

  std::optional<TimePoint> first_byte_at() const {
    return has_first_byte ? std::optional(first_byte) : std::nullopt;
  }
};

// A finished stream as a session reports it to the worker; views into the session, valid for
// the duration of the call.
struct Finished {
  const Stream& stream;
  record::Outcome outcome;
  int status;  // HTTP status, 0 when none was received
  TimePoint done;
  bool responded;  // a complete response arrived (its latency counts)
  bool reused;     // sent on a connection that carried an earlier request
  uint16_t local_port;
  std::string_view backend;
  std::string_view router_error;
  const record::Http2Facts* h2 = nullptr;  // HTTP/2 runs only
  std::string_view error_body;             // an error response's first bytes (HTTP/1.1 only)
};

}  // namespace zerodrop::load
