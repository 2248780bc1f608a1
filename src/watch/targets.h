#pragma once

#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "verify/agent_watch.h"

namespace zerodrop::watch {

// A Service as watch probes it.
struct ServiceInfo {
  std::string namespace_name;
  std::string name;
  nlohmann::json selector;  // spec.selector (a map); null: selects nothing
  verify::ProbeTarget target;
  std::string port_name;  // the probed port's name and number (what an Ingress backend names)
  int port_number = 0;
  std::string problem;  // the annotation that cannot be probed, one line ("" = fine)
};

// The method a gRPC port is probed with when no annotation names one: the standard health
// check, whose empty request asks for the whole server.
inline constexpr const char* kGrpcHealthCheck = "/grpc.health.v1.Health/Check";

// Reads a Service: the port from annotation zerodrop.dev/probe-port (a port's name or number),
// else the first port. The protocol from that port's appProtocol (`grpc`; `kubernetes.io/h2c`
// or `h2c`: HTTP/2 by prior knowledge; else HTTP/1.1) or annotation zerodrop.dev/probe:
// "grpc:/pkg.Service/Method" (gRPC, that method with an empty request), "h2c:/PATH",
// "http:/PATH" or "/PATH" (the path, else "/"); a grpc port without the annotation is probed
// with kGrpcHealthCheck. A headless Service (no ClusterIP) gets no target; one whose
// annotations name no port of it, or are malformed (a gRPC method not /pkg.Service/Method), gets
// a `problem` and no target.
ServiceInfo read_service(const nlohmann::json& service);

// Whether the Service's selector selects pods labelled `labels` (every pair present).
bool selects(const ServiceInfo& service, const nlohmann::json& labels);

// The targets to hand every agent: each probed Service at the rate per agent, cut so that all
// agents together stay within `budget` requests/s (0 = no budget).
std::vector<verify::ProbeTarget> agent_targets(const std::vector<ServiceInfo>& services,
                                               double rate, double budget, int agents);

}  // namespace zerodrop::watch
