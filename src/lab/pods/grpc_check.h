#pragma once

#include <memory>
#include <optional>
#include <string>
#include <string_view>

#include "lab/pods/probe.h"

namespace zerodrop::lab {

// The kubelet's gRPC probe: a fresh plaintext HTTP/2 connection (h2c, prior knowledge) to the
// pod per check, one grpc.health.v1.Health/Check(service) call; passes only on SERVING.

// The framed HealthCheckRequest for `service` ("" asks about the whole server).
std::string health_check_request(std::string_view service);

// The ServingStatus (field 1) of a framed HealthCheckResponse: 0 (UNKNOWN) when the field is
// absent, as protobuf's default; nullopt when the bytes are not one well-formed message.
std::optional<int> health_status(std::string_view framed);

// Starts one check on the io_context's thread; `done` as for Check::start.
std::shared_ptr<Check> start_grpc_check(boost::asio::io_context& io, const ProbeSpec& spec,
                                        const CheckTarget& target, Duration timeout,
                                        Check::Done done);

}  // namespace zerodrop::lab
