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

// kube-proxy's partial sync from the endpoints `before` to `after` (each the usable ones, in
// order), one iptables-restore input: filter's KUBE-SERVICES redeclared (so flushed) and refilled
// (the REJECT while the Service has no endpoint), nat's KUBE-SERVICES, the Service's KUBE-SVC
// and every KUBE-SEP of `after` redeclared and refilled, the KUBE-SEP of each endpoint gone
// flushed and deleted (docs/dataplane-sync.md).
std::string iptables_update(const ClusterService& service, const std::vector<Endpoint>& before,
                            const std::vector<Endpoint>& after);

// The atomic shape of the same change: the Service's dispatch alternates between two chains
// (KUBE-SVA-, KUBE-SVB- by `generation`'s parity); this change fills the one no rule points to,
// adds the new endpoints' KUBE-SEP whole, replaces (-R) KUBE-SERVICES' one rule to point to it,
// and deletes the KUBE-SEP of `gone_earlier` (endpoints the change before removed, whose last
// reference went with the flush); the filter table's REJECT only when the Service gains its
// first endpoint or loses its last. Nothing a packet may be traversing is flushed.
std::string iptables_atomic_update(const ClusterService& service,
                                   const std::vector<Endpoint>& before,
                                   const std::vector<Endpoint>& after,
                                   const std::vector<Endpoint>& gone_earlier, int generation);

}  // namespace zerodrop::lab
