#pragma once

// The rules kube-proxy's iptables mode programs for one Service: nat KUBE-SERVICES (jumped from
// PREROUTING and OUTPUT) sends the Service address to KUBE-SVC-<hash>, whose rules pick an
// endpoint with `-m statistic --mode random --probability 1/k` in order (the last unconditional)
// and jump to KUBE-SEP-<hash>, which DNATs to the pod; with no usable endpoint, filter
// KUBE-SERVICES rejects new connections with icmp-port-unreachable. Pure text, for
// `iptables-restore --noflush`.

#include <string>
#include <vector>

#include "lab/kernel/kube_proxy_nft.h"
#include "lab/routers/endpoint_table.h"

namespace zerodrop::lab {

// The chains and jumps with the Service and no endpoint yet (new connections rejected).
std::string iptables_base_ruleset(const ClusterService& service);

// One iptables-restore input from the endpoints `before` to `after` (each the usable ones, in
// order): the nat table's service chain rewritten, new endpoint chains added, gone ones deleted;
// the filter table's REJECT only when the Service gains its first endpoint or loses its last.
std::string iptables_update(const ClusterService& service, const std::vector<Endpoint>& before,
                            const std::vector<Endpoint>& after);

}  // namespace zerodrop::lab
