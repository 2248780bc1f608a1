#pragma once

// The rules kube-proxy's nftables mode programs for one Service (KEP-3866): one table
// `ip kube-proxy`; the Service address dispatched through the `service-ips` map to a per-service
// chain that picks an endpoint chain with `numgen random mod N`; each endpoint chain DNATs to its
// pod; a Service with no usable endpoint is rejected through `no-endpoint-services`. Pure text:
// the nftables router hands each script to nft as one transaction. How a change is written, in
// kube-proxy's shape or an atomic one: docs/dataplane-sync.md.

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

// kube-proxy's partial sync from the endpoints `before` to `after` (each the usable ones, in
// order), one transaction: every endpoint chain of `after` and the Service's chain added and
// flushed, then written again (the chain every new connection to the Service traverses is
// empty inside the transaction); the chains of endpoints gone flushed, not deleted (the caller
// deletes them later: nft_delete_chains); the Service moved in or out of `no-endpoint-services`
// when it gains its first endpoint or loses its last.
std::string nft_update(const ClusterService& service, const std::vector<Endpoint>& before,
                       const std::vector<Endpoint>& after);

// The atomic shape of the same change: no rule with a set is replaced in a chain a packet may
// be traversing. The chains of `after`'s endpoints not in `existing` (endpoints whose chains are
// still there) are added whole, the dispatch chain of `generation` (nft_service_chain, its rule
// with its own anonymous map) is added whole, and the Service's chain, which `service-ips`
// keeps pointing to, gets its one rule, `goto` that chain, replaced (a plain rule); the caller
// deletes the chains no longer named later.
std::string nft_atomic_update(const ClusterService& service, const std::vector<Endpoint>& before,
                              const std::vector<Endpoint>& after,
                              const std::vector<Endpoint>& existing, int generation);

// A transaction that empties then deletes `chains` (in any order: a rule of one may name
// another).
std::string nft_delete_chains(const std::vector<std::string>& chains);

// kube-proxy's chain names: "service-<name>" (generation 0; the atomic shape's later ones
// ".g<generation>") and "endpoint-<name>__<ip>/<port>".
std::string nft_service_chain(const ClusterService& service, int generation);
std::string nft_endpoint_chain(const ClusterService& service, const Endpoint& endpoint);

}  // namespace zerodrop::lab
