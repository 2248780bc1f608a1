#pragma once

#include <array>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "sim/distribution.h"

namespace zerodrop::sim {

// How routers learn of endpoint changes and pick backends.
enum class Dataplane { iptables, nftables, ingress_nginx, cloud_lb, ipvs };
inline constexpr std::array<std::string_view, 5> kDataplaneNames = {
    "kube-proxy-iptables", "kube-proxy-nftables", "ingress-nginx", "cloud-lb", "kube-proxy-ipvs"};

// kube-proxy on every node (iptables, nftables or IPVS mode): the L4 routers.
constexpr bool is_kube_proxy(Dataplane d) {
  return d == Dataplane::iptables || d == Dataplane::nftables || d == Dataplane::ipvs;
}

std::string_view to_string(Dataplane dataplane);  // "kube-proxy-iptables", …
Dataplane dataplane_from_string(std::string_view text, std::string_view what);  // throws Error

// Control plane: pod changes -> EndpointSlice writes -> watch delivery (docs/sim.md, Model).
struct ControlPlaneModel {
  Distribution informer_delay = Distribution::quantiles(0.02, 0.2);  // pod change seen
  double batch_period = 0;  // --endpointslice-updates-batch-period (default 0)
  double api_qps = 20;      // kcm --kube-api-qps, shared by all controllers
  double api_burst = 30;    // kcm --kube-api-burst
  Distribution api_write = Distribution::quantiles(0.015, 0.1);  // one API write
  int max_endpoints_per_slice = 100;                             // --max-endpoints-per-slice
  Distribution watch_base = Distribution::quantiles(0.5, 2.0);   // apiserver -> one watcher
  double watch_spread_per_node = 0.0003;  // fan-out spread per watcher per full slice (assumed)
  Distribution kubelet_delay = Distribution::quantiles(0.3, 1.0);  // deletion -> kubelet acts
  Distribution pod_start = Distribution::quantiles(2.0, 8.0);      // created -> process running
  // Process running -> its port listens. Probes start with the process, so a probe that comes
  // before it fails and Ready waits for the next period.
  Distribution listen_delay = Distribution::fixed(0);
  Distribution controller_delay = Distribution::quantiles(0.05, 0.3);  // deployment reaction
};

// kube-proxy on every node (k/k pkg/proxy; KEP-3453 iptables, KEP-3866 nftables).
struct KubeProxyModel {
  double min_sync_period = 1;  // iptables.minSyncPeriod (nftables mode's too)
  // ipvs.minSyncPeriod: kube-proxy's v1alpha1 defaults.go sets none (0: a sync per change, the
  // runner's burst aside) where it sets iptables.minSyncPeriod to 1 s.
  double ipvs_min_sync_period = 0;
  double sync_period = 30;    // full resync at least this often (iptables)
  int burst = 2;              // BoundedFrequencyRunner burstSyncs
  double pods_per_node = 30;  // background endpoints per node: the rule count grows with it
  double endpoints_per_service = 10;
  double sync_base = 0.02;           // fixed cost of one iptables-restore
  double sync_per_service = 40e-6;   // partial sync: KUBE-SERVICES is written in full
  double sync_per_endpoint = 55e-6;  // full sync: every endpoint's chains
  double nft_per_change = 2e-4;      // nftables: per changed endpoint, incremental
  double node_sigma = 0.4;           // log-normal spread of per-node slowness
};

// ingress-nginx (its endpointslices.go and balancer.lua).
struct IngressModel {
  int replicas = 2;                                        // controller pods: the routers
  double sync_rate_limit = 0.3;                            // --sync-rate-limit, syncs per second
  Distribution post = Distribution::quantiles(0.05, 0.3);  // POST of backends to Lua
  double worker_poll = 1;                                  // BACKENDS_SYNC_INTERVAL
  int tries = 3;                                           // proxy_next_upstream_tries
};

// A cloud load balancer with ip targets (aws-load-balancer-controller's, for one).
struct CloudLbModel {
  int nodes = 3;                                                 // LB nodes: the routers
  Distribution reconcile = Distribution::quantiles(1.0, 5.0);    // LB controller reacts
  Distribution deregister = Distribution::quantiles(5.0, 30.0);  // API call -> LB nodes stop
  double health_interval = 10;
  int unhealthy_threshold = 2;
  int healthy_threshold = 2;
  double deregistration_delay = 300;  // draining connections are closed after this
};

// A cluster: everything that is not the workload, the traffic or the action.
struct Profile {
  std::string name;
  std::string description;
  int nodes = 3;  // default --nodes
  Dataplane dataplane = Dataplane::iptables;
  ControlPlaneModel control;
  KubeProxyModel proxy;
  IngressModel ingress;
  CloudLbModel cloud_lb;
  // When set, every router applies every change this long after it (the lab's model) and the
  // control plane and router models above are bypassed.
  std::optional<Distribution> propagation;
};

// Built-in profiles: "gke" (the default), "eks", "kind", "lab".
std::vector<std::string_view> builtin_profiles();
// A built-in by name, or a YAML file (a path ending in .yaml/.yml). Throws Error naming the file
// and the key on bad input, "did you mean" for an unknown profile name.
Profile load_profile(std::string_view name_or_path);
// The settable keys of a YAML profile, for docs and errors.
std::vector<std::string_view> profile_keys();

}  // namespace zerodrop::sim
