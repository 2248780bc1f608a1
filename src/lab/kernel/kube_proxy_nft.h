#pragma once

// The rules kube-proxy's nftables mode programs for one Service (KEP-3866): one table
// `ip kube-proxy`; the Service address dispatched through the `service-ips` map to a per-service
// chain that picks an endpoint chain with `numgen random mod N`; each endpoint chain DNATs to its
// pod; a Service with no usable endpoint is rejected through `no-endpoint-services`. Pure text:
// the nftables router hands each script to libnftables as one transaction.

#include <cstdint>
#include <string>
#include <vector>

#include "lab/routers/endpoint_table.h"

namespace zerodrop::lab {

// The Service as every node sees it: its ClusterIP and port, and its kube-proxy name.
struct ClusterService {
  std::string ip = "10.96.0.10";
  uint16_t port = 80;
  std::string name = "default/web/tcp/http";  // namespace/name/protocol/port name
};

// The table with the Service and no endpoint yet (new connections rejected).
std::string nft_base_ruleset(const ClusterService& service);

// One transaction from the endpoints `before` to `after` (each the usable ones, in order): the
// new endpoints' chains, the service chain rewritten, the gone ones deleted, and the Service
// moved in or out of `no-endpoint-services` when it gains its first or loses its last.
std::string nft_update(const ClusterService& service, const std::vector<Endpoint>& before,
                       const std::vector<Endpoint>& after);

}  // namespace zerodrop::lab
