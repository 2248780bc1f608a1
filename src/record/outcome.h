#pragma once

#include <array>
#include <cstdint>
#include <optional>
#include <string_view>

#include "base/enum_names.h"

namespace zerodrop::record {

// The class of one request's outcome: the load engine's vocabulary (see docs/ARCHITECTURE.md).
enum class Outcome : uint8_t {
  ok,                      // a response whose status counts as success (2xx/3xx by default)
  connect_refused,         // ECONNREFUSED: nothing listened
  connect_timeout,         // the TCP handshake did not finish within the timeout
  connect_error,           // any other connect failure (unreachable, no route, resolution)
  reset_before_response,   // ECONNRESET after the request was sent, before any response byte
  closed_before_response,  // orderly EOF before any response byte
  reset_during_response,   // ECONNRESET after some response bytes
  truncated_response,      // EOF before the body the headers announced was complete
  timeout,                 // no complete response within the request timeout
  http_502,
  http_503,
  http_504,
  http_5xx,        // any other 5xx
  http_4xx,        // any 4xx not configured as success
  protocol_error,  // a response that is not valid HTTP/1.1 (or HTTP/2, or gRPC), or exceeds the
                   // engine's bounds
  // HTTP/2 and gRPC only, appended so that the classes above keep their numbers:
  refused_stream,          // RST_STREAM REFUSED_STREAM, not resent (or the resend refused too)
  goaway_unprocessed,      // above a GOAWAY's last stream id (never processed), not resent
  stream_reset,            // RST_STREAM with any other code before the response was complete
  grpc_unavailable,        // grpc-status 14
  grpc_deadline_exceeded,  // grpc-status 4
  grpc_cancelled,          // grpc-status 1
  grpc_internal,           // grpc-status 13
  grpc_other,              // any other grpc-status not configured as success
};

inline constexpr size_t kOutcomeCount = static_cast<size_t>(Outcome::grpc_other) + 1;

// std::to_array takes its size from the list, so a missing name fails the static_assert below
// instead of becoming an empty string.
inline constexpr auto kOutcomeNames = std::to_array<std::string_view>({
    "ok",
    "connect_refused",
    "connect_timeout",
    "connect_error",
    "reset_before_response",
    "closed_before_response",
    "reset_during_response",
    "truncated_response",
    "timeout",
    "http_502",
    "http_503",
    "http_504",
    "http_5xx",
    "http_4xx",
    "protocol_error",
    "refused_stream",
    "goaway_unprocessed",
    "stream_reset",
    "grpc_unavailable",
    "grpc_deadline_exceeded",
    "grpc_cancelled",
    "grpc_internal",
    "grpc_other",
});
static_assert(kOutcomeNames.size() == kOutcomeCount, "one name per Outcome");

constexpr std::string_view to_string(Outcome o) { return kOutcomeNames[static_cast<size_t>(o)]; }

constexpr std::optional<Outcome> outcome_from_string(std::string_view name) {
  return enum_from_name<Outcome>(kOutcomeNames, name);
}

// The outcome class of an HTTP status that is not configured as success.
constexpr Outcome outcome_of_status(int status) {
  switch (status) {
    case 502: return Outcome::http_502;
    case 503: return Outcome::http_503;
    case 504: return Outcome::http_504;
    default: break;
  }
  if (status >= 500) {
    return Outcome::http_5xx;
  }
  if (status >= 400) {
    return Outcome::http_4xx;
  }
  return Outcome::protocol_error;  // 1xx as a final status, or below 100
}

}  // namespace zerodrop::record
