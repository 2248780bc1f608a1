#pragma once

// How a node's kube-proxy puts its rules in the kernel: nftables transactions (kube_proxy_nft.cc)
// or iptables-restore runs (kube_proxy_iptables.cc). Everything else of a kernel node (its
// namespace, conntrack events, the socket trace's fates) is the same router's (nft_router.cc).

#include <memory>
#include <string>
#include <vector>

#include "lab/kernel/kube_proxy_nft.h"
#include "lab/routers/endpoint_table.h"
#include "lab/routers/router.h"

namespace zerodrop::lab {

class KubeProxyRules {
public:
  virtual ~KubeProxyRules() = default;

  // In the namespace of the thread that made this object: the Service with no endpoint yet (new
  // connections rejected). "" or what failed, naming the dataplane.
  virtual std::string program_base(const ClusterService& service) = 0;

  // One transaction from the usable endpoints `before` to `after`. "" or the kernel's error.
  virtual std::string program_update(const ClusterService& service,
                                     const std::vector<Endpoint>& before,
                                     const std::vector<Endpoint>& after) = 0;
};

// Each throws Error when its tool cannot run (naming the package). `sync`: each change in
// kube-proxy's shape or the atomic one (docs/dataplane-sync.md).
std::unique_ptr<KubeProxyRules> nft_rules(DataplaneSync sync);
std::unique_ptr<KubeProxyRules> iptables_rules(DataplaneSync sync);

}  // namespace zerodrop::lab
