#include "sim/dataplane.h"

#include <algorithm>
#include <cmath>

#include <fmt/format.h>

#include "sim/event_queue.h"

namespace zerodrop::sim {

Routers::Routers(const Options& options, const ControlPlane& control, uint64_t seed)
    : o_(options), control_(control), seed_(seed) {
  const Profile& p = options.profile;
  switch (options.dataplane) {
    case Dataplane::iptables:
    case Dataplane::nftables:
    case Dataplane::ipvs:
      count_ = options.nodes;
      break;
    case Dataplane::ingress_nginx:
      count_ = std::max(1, p.ingress.replicas);
      break;
    case Dataplane::cloud_lb:
      count_ = std::max(1, p.cloud_lb.nodes);
      break;
  }
  cluster_endpoints_ = options.nodes * p.proxy.pods_per_node + options.replicas;
  services_ = cluster_endpoints_ / std::max(1.0, p.proxy.endpoints_per_service);
  if (options.dataplane == Dataplane::cloud_lb && !p.propagation) {
    // One LB controller watches the slices; each reconcile covers every write received before
    // it starts.
    Random random(seed ^ 0xC10D1BULL);
    std::vector<double> received;
    receive(random, received);
    lb_controller_.resize(received.size());
    double free = 0;
    for (size_t w = 0; w < received.size();) {
      double start = std::max(free, received[w]);
      free = start + p.cloud_lb.reconcile.sample(random);
      for (; w < received.size() && received[w] <= start; ++w) {
        lb_controller_[w] = free;
      }
    }
  }
}

bool Routers::in_order() const {
  return o_.dataplane != Dataplane::cloud_lb;
}

std::string Routers::name(int router) const {
  switch (o_.dataplane) {
    case Dataplane::iptables:
    case Dataplane::nftables:
    case Dataplane::ipvs:
      return fmt::format("node-{}", router);
    case Dataplane::ingress_nginx:
      return fmt::format("ingress-{}", router);
    case Dataplane::cloud_lb:
      return fmt::format("lb-{}", router);
  }
  return "";
}

// Watch delivery: the API server fans each write out to every watcher (spread growing with the
// node count and the slice's size); one watch stream delivers in order.
void Routers::receive(Random& random, std::vector<double>& received) const {
  const ControlPlaneModel& cp = o_.profile.control;
  double per_slice = std::max(1, cp.max_endpoints_per_slice);
  double last = 0;
  received.resize(control_.writes.size());
  for (size_t w = 0; w < control_.writes.size(); ++w) {
    const SliceWrite& write = control_.writes[w];
    double size = std::clamp(write.endpoints / per_slice, 0.1, 1.0);
    double spread = cp.watch_spread_per_node * o_.nodes * size;
    double at = write.commit + cp.watch_base.sample(random) + random.uniform() * spread;
    last = std::max(last, at);
    received[w] = last;
  }
}

double Routers::min_sync_period() const {
  const KubeProxyModel& kp = o_.profile.proxy;
  return o_.min_sync_period.value_or(o_.dataplane == Dataplane::ipvs ? kp.ipvs_min_sync_period
                                                                     : kp.min_sync_period);
}

// kube-proxy's BoundedFrequencyRunner (burst 2, one sync per minSyncPeriod) around syncProxyRules:
// every sync applies all changes received before it starts; iptables writes KUBE-SERVICES in full
// each sync and every rule at least every syncPeriod; nftables is incremental (KEP-3453, KEP-3866);
// IPVS updates the changed real servers by netlink, costed as nftables' changes (assumed).
void Routers::kube_proxy(Random& random, const std::vector<double>& received,
                         std::vector<double>& applied, uint64_t& events,
                         std::vector<std::pair<double, double>>* syncs) const {
  const KubeProxyModel& kp = o_.profile.proxy;
  bool nft = o_.dataplane == Dataplane::nftables || o_.dataplane == Dataplane::ipvs;
  double slowness = random.lognormal(0, kp.node_sigma);
  TokenBucket runner(1.0 / std::max(min_sync_period(), 1e-6), std::max(1, kp.burst));
  double last_full = random.uniform() * kp.sync_period - kp.sync_period;
  double free = 0;
  size_t w = 0, n = received.size();
  while (w < n) {
    double request = std::max(received[w], free);
    double due = nft || kp.sync_period <= 0 ? kNever : last_full + kp.sync_period;
    double start = runner.acquire(std::min(request, std::max(due, free)));
    bool full = !nft && start >= due;
    double changed = 0;
    size_t first = w;
    while (w < n && received[w] <= start) {
      changed += control_.writes[w].endpoints;
      ++w;
    }
    double cost = nft ? kp.sync_base + kp.nft_per_change * changed
                      : kp.sync_base + kp.sync_per_service * services_
                            + kp.sync_per_endpoint * (full ? cluster_endpoints_ : changed);
    free = start + slowness * cost;
    if (syncs) {
      syncs->emplace_back(start, free);
    }
    last_full = full ? start : last_full;
    std::fill(applied.begin() + static_cast<long>(first), applied.begin() + static_cast<long>(w),
              free);
    ++events;
  }
}

// ingress-nginx: syncs at most --sync-rate-limit per second, POSTs the backends to Lua, and the
// workers pick them up at their next 1 s poll (balancer.lua's BACKENDS_SYNC_INTERVAL).
void Routers::ingress(Random& random, const std::vector<double>& received,
                      std::vector<double>& applied, uint64_t& events) const {
  const IngressModel& in = o_.profile.ingress;
  TokenBucket limiter(in.sync_rate_limit, 1);
  double phase = random.uniform() * in.worker_poll;
  double free = 0;
  size_t w = 0, n = received.size();
  while (w < n) {
    double start = limiter.acquire(std::max(received[w], free));
    size_t first = w;
    while (w < n && received[w] <= start) {
      ++w;
    }
    free = start + in.post.sample(random);
    double poll = in.worker_poll > 0
                      ? phase + std::ceil((free - phase) / in.worker_poll) * in.worker_poll
                      : free;
    std::fill(applied.begin() + static_cast<long>(first), applied.begin() + static_cast<long>(w),
              poll);
    ++events;
  }
}

void Routers::apply_times(int router, std::vector<double>& applied, uint64_t& events,
                          std::vector<std::pair<double, double>>* syncs) const {
  Random random(seed_ ^ (0x9E3779B97F4A7C15ULL * static_cast<uint64_t>(router + 1)));
  size_t n = control_.writes.size();
  applied.assign(n, kNever);
  if (const auto& direct = o_.profile.propagation) {
    // The lab's model: each change lands after its own delay, but a router applies them in
    // order (as a watch stream delivers them): a change waits for the one before it.
    double last = 0;
    for (size_t w = 0; w < n; ++w) {
      last = std::max(last, control_.writes[w].commit + direct->sample(random));
      applied[w] = last;
    }
    events += n;
    return;
  }
  if (o_.dataplane == Dataplane::cloud_lb) {
    // Each target's (de)registration is its own API operation: no order between them.
    for (size_t w = 0; w < n; ++w) {
      applied[w] = lb_controller_[w] + o_.profile.cloud_lb.deregister.sample(random);
    }
    events += n;
    return;
  }
  std::vector<double> received;
  receive(random, received);
  events += n;
  if (o_.dataplane == Dataplane::ingress_nginx) {
    ingress(random, received, applied, events);
  } else {
    kube_proxy(random, received, applied, events, syncs);
  }
}

double Routers::unhealthy_at(int router, double refuse_from) const {
  if (o_.dataplane != Dataplane::cloud_lb || refuse_from == kNever) {
    return kNever;
  }
  const CloudLbModel& lb = o_.profile.cloud_lb;
  // Health checks run on a fixed per-node phase; the target is out after `unhealthy` failures.
  Random random(seed_ ^ (0xB5AD4ECEDA1CE2A9ULL * static_cast<uint64_t>(router + 1)));
  double phase = random.uniform() * lb.health_interval;
  double first = phase + std::ceil((refuse_from - phase) / lb.health_interval) * lb.health_interval;
  return first + (std::max(1, lb.unhealthy_threshold) - 1) * lb.health_interval;
}

}  // namespace zerodrop::sim
