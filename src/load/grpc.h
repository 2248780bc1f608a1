#pragma once

#include <array>
#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "record/outcome.h"

namespace zerodrop::load {

// Unary gRPC on the wire (grpc/grpc doc/PROTOCOL-HTTP2.md), without a protobuf library: messages
// are opaque bytes behind a 5-byte prefix, the outcome is the grpc-status trailer.

// gRPC status names by code: "OK" … "UNAUTHENTICATED" (0 to 16).
inline constexpr auto kGrpcStatusNames = std::to_array<std::string_view>({
    "OK",
    "CANCELLED",
    "UNKNOWN",
    "INVALID_ARGUMENT",
    "DEADLINE_EXCEEDED",
    "NOT_FOUND",
    "ALREADY_EXISTS",
    "PERMISSION_DENIED",
    "RESOURCE_EXHAUSTED",
    "FAILED_PRECONDITION",
    "ABORTED",
    "OUT_OF_RANGE",
    "UNIMPLEMENTED",
    "INTERNAL",
    "UNAVAILABLE",
    "DATA_LOSS",
    "UNAUTHENTICATED",
});

// "/pkg.Service/Method" from "pkg.Service/Method", "/pkg.Service/Method" or ghz's
// "pkg.Service.Method". Throws Error naming --grpc when it is none of these.
std::string grpc_path(std::string_view method);

// `message` behind the uncompressed length prefix: 0, then its length in 4 big-endian bytes.
std::string grpc_frame(std::string_view message);

// Parses a list of gRPC statuses by name or number ("OK,NOT_FOUND", "0,5"). Throws Error naming
// --ok-grpc-status and the culprit.
std::vector<int> parse_grpc_statuses(std::string_view list);

// The class of a grpc-status that is not configured as success.
record::Outcome outcome_of_grpc_status(int status);

// Appends the percent-decoded `in` (grpc-message) to `out`, up to `max` bytes in all.
void percent_decode(std::string_view in, std::string& out, size_t max);

// Checks that response DATA is a sequence of length-prefixed messages, without keeping them.
class GrpcFraming {
public:
  void reset() { *this = GrpcFraming(); }

  // Consumes `n` bytes of DATA starting with `data`.
  void feed(const uint8_t* data, size_t n);

  // True when the DATA so far ends on a message boundary and no message was compressed.
  bool complete() const { return !bad_ && header_seen_ == 0 && remaining_ == 0; }

  bool malformed() const { return bad_; }

private:
  std::array<uint8_t, 5> header_{};
  size_t header_seen_ = 0;
  uint64_t remaining_ = 0;  // bytes of the current message still to come
  bool bad_ = false;
};

}  // namespace zerodrop::load
