#include "sim/profile.h"

#include <array>
#include <filesystem>
#include <functional>

#include <fmt/format.h>

#include "base/duration.h"
#include "base/enum_names.h"
#include "base/error.h"
#include "base/parse.h"
#include "base/text.h"
#include "kube/yaml_file.h"

namespace zerodrop::sim {
namespace {

Profile gke() {
  Profile p;
  p.name = "gke";
  p.description = "GCE/GKE-like: dense services, iptables; 5000 nodes give p50 ~5 s, p99 20-25 s";
  return p;  // the struct defaults are this profile
}

Profile eks() {
  Profile p;
  p.name = "eks";
  p.description = "AWS/EKS-like: iptables, lighter rule sets; 5000 nodes give p99 ~10-11 s";
  p.proxy.pods_per_node = 15;
  p.proxy.sync_per_endpoint = 60e-6;
  p.proxy.node_sigma = 0.35;
  p.control.watch_spread_per_node = 0.0002;
  return p;
}

Profile kind() {
  Profile p;
  p.name = "kind";
  p.description =
      "kind on a laptop: few nodes, iptables.minSyncPeriod 5s (kind's kubeadm template)";
  p.proxy.min_sync_period = 5;  // kind's kubeadm template, kind commit 209cb3c
  p.proxy.pods_per_node = 10;
  p.proxy.node_sigma = 0.2;
  p.control.pod_start = Distribution::quantiles(1.0, 3.0);
  return p;
}

Profile lab() {
  Profile p;
  p.name = "lab";
  p.description =
      "zerodrop lab's emulation: uniform 1s..3s propagation per change, instant kubelet";
  p.propagation = Distribution::uniform(1, 3);
  p.control.kubelet_delay = Distribution::fixed(0);
  // The lab spawns a process in about 3 ms (pod_created to pod_started: 2.5 ms mean over 60
  // pods); the example servers listen a few ms later, after the first readiness probe (which
  // the lab sends at once). Its controllers act on each event as it happens: 0.2 ms from a new
  // pod's Ready to the old pod's deletion, and from that to the next surge pod.
  p.control.pod_start = Distribution::fixed(0.003);
  p.control.listen_delay = Distribution::fixed(0.01);
  p.control.controller_delay = Distribution::fixed(0.0002);
  p.control.informer_delay = Distribution::fixed(0);
  p.control.api_write = Distribution::fixed(0);
  p.control.api_qps = 0;  // the lab's endpoint controller is not rate limited
  return p;
}

using Setter = std::function<void(Profile&, std::string_view text, const std::string& what)>;

struct Key {
  std::string_view name;
  Setter set;
};

template <typename Get>
Setter seconds(Get get) {
  return [get](Profile& p, std::string_view text, const std::string& what) {
    get(p) = to_seconds(parse_duration(text, what));
  };
}

template <typename Get>
Setter number(Get get) {
  return [get](Profile& p, std::string_view text, const std::string& what) {
    double v = parse_number(text, what);
    if (v < 0) {
      throw Error(fmt::format("{}: must not be negative, got '{}'", what, text));
    }
    get(p) = static_cast<std::remove_reference_t<decltype(get(p))>>(v);
  };
}

template <typename Get>
Setter distribution(Get get) {
  return [get](Profile& p, std::string_view text, const std::string& what) {
    get(p) = parse_distribution(text, what);
  };
}

const std::vector<Key>& keys() {
  static const std::vector<Key> table = {
      {"description",
       [](Profile& p, std::string_view t, auto&) {
         p.description = t;
       }},
      {"nodes", number([](Profile& p) -> int& { return p.nodes; })},
      {"dataplane",
       [](Profile& p, std::string_view t, const std::string& w) {
         p.dataplane = dataplane_from_string(t, w);
       }},
      {"propagation",
       [](Profile& p, std::string_view t, const std::string& w) {
         p.propagation = parse_distribution(t, w);
       }},
      {"control.informerDelay",
       distribution([](Profile & p) -> auto& { return p.control.informer_delay; })},
      {"control.batchPeriod", seconds([](Profile & p) -> auto& { return p.control.batch_period; })},
      {"control.apiQps", number([](Profile & p) -> auto& { return p.control.api_qps; })},
      {"control.apiBurst", number([](Profile & p) -> auto& { return p.control.api_burst; })},
      {"control.apiWrite", distribution([](Profile & p) -> auto& { return p.control.api_write; })},
      {"control.maxEndpointsPerSlice",
       number([](Profile & p) -> auto& { return p.control.max_endpoints_per_slice; })},
      {"control.watchBase",
       distribution([](Profile & p) -> auto& { return p.control.watch_base; })},
      {"control.watchSpreadPerNode",
       seconds([](Profile & p) -> auto& { return p.control.watch_spread_per_node; })},
      {"control.kubeletDelay",
       distribution([](Profile & p) -> auto& { return p.control.kubelet_delay; })},
      {"control.podStart", distribution([](Profile & p) -> auto& { return p.control.pod_start; })},
      {"control.listenDelay",
       distribution([](Profile & p) -> auto& { return p.control.listen_delay; })},
      {"control.controllerDelay",
       distribution([](Profile & p) -> auto& { return p.control.controller_delay; })},
      {"kubeProxy.minSyncPeriod",
       seconds([](Profile & p) -> auto& { return p.proxy.min_sync_period; })},
      {"kubeProxy.ipvsMinSyncPeriod",
       seconds([](Profile & p) -> auto& { return p.proxy.ipvs_min_sync_period; })},
      {"kubeProxy.syncPeriod", seconds([](Profile & p) -> auto& { return p.proxy.sync_period; })},
      {"kubeProxy.burst", number([](Profile & p) -> auto& { return p.proxy.burst; })},
      {"kubeProxy.podsPerNode", number([](Profile & p) -> auto& { return p.proxy.pods_per_node; })},
      {"kubeProxy.endpointsPerService",
       number([](Profile & p) -> auto& { return p.proxy.endpoints_per_service; })},
      {"kubeProxy.syncBase", seconds([](Profile & p) -> auto& { return p.proxy.sync_base; })},
      {"kubeProxy.syncPerService",
       seconds([](Profile & p) -> auto& { return p.proxy.sync_per_service; })},
      {"kubeProxy.syncPerEndpoint",
       seconds([](Profile & p) -> auto& { return p.proxy.sync_per_endpoint; })},
      {"kubeProxy.nftPerChange",
       seconds([](Profile & p) -> auto& { return p.proxy.nft_per_change; })},
      {"kubeProxy.nodeSigma", number([](Profile & p) -> auto& { return p.proxy.node_sigma; })},
      {"ingress.replicas", number([](Profile & p) -> auto& { return p.ingress.replicas; })},
      {"ingress.syncRateLimit",
       number([](Profile & p) -> auto& { return p.ingress.sync_rate_limit; })},
      {"ingress.post", distribution([](Profile & p) -> auto& { return p.ingress.post; })},
      {"ingress.workerPoll", seconds([](Profile & p) -> auto& { return p.ingress.worker_poll; })},
      {"ingress.tries", number([](Profile & p) -> auto& { return p.ingress.tries; })},
      {"cloudLb.nodes", number([](Profile & p) -> auto& { return p.cloud_lb.nodes; })},
      {"cloudLb.reconcile",
       distribution([](Profile & p) -> auto& { return p.cloud_lb.reconcile; })},
      {"cloudLb.deregister",
       distribution([](Profile & p) -> auto& { return p.cloud_lb.deregister; })},
      {"cloudLb.healthInterval",
       seconds([](Profile & p) -> auto& { return p.cloud_lb.health_interval; })},
      {"cloudLb.unhealthyThreshold",
       number([](Profile & p) -> auto& { return p.cloud_lb.unhealthy_threshold; })},
      {"cloudLb.healthyThreshold",
       number([](Profile & p) -> auto& { return p.cloud_lb.healthy_threshold; })},
      {"cloudLb.deregistrationDelay",
       seconds([](Profile & p) -> auto& { return p.cloud_lb.deregistration_delay; })},
  };
  return table;
}

Profile builtin(std::string_view name) {
  if (name == "gke") {
    return gke();
  }
  if (name == "eks") {
    return eks();
  }
  if (name == "kind") {
    return kind();
  }
  if (name == "lab") {
    return lab();
  }
  auto names = builtin_profiles();
  std::string hint = closest_match(name, names);
  throw Error(hint.empty()
                  ? fmt::format("--profile: unknown profile '{}' (gke, eks, kind, lab, or a .yaml "
                                "file)",
                                name)
                  : fmt::format("--profile: unknown profile '{}'; did you mean '{}'?", name, hint));
}

// Flattens nested maps into dotted keys: {kubeProxy: {burst: 2}} -> "kubeProxy.burst".
void flatten(const kube::YamlFile& file, const kube::YamlNode& map, const std::string& prefix,
             std::vector<std::pair<std::string, const kube::YamlNode*>>& out) {
  for (auto [key_node, value] : file.entries(map, "expected a map of profile settings")) {
    std::string key = prefix + file.scalar(*key_node, "a key");
    if (value->is_map()) {
      flatten(file, *value, key + ".", out);
    } else {
      out.emplace_back(key, value);
    }
  }
}

void apply_key(Profile& profile, const kube::YamlFile& file, const std::string& key,
               const kube::YamlNode& value) {
  std::string what =
      fmt::format("{}: line {}: {}", file.path(), kube::YamlFile::mark(value).line, key);
  for (const Key& k : keys()) {
    if (k.name == key) {
      if (!value.is_scalar()) {
        throw Error(what + ": expected a single value");
      }
      k.set(profile, value.scalar, what);
      return;
    }
  }
  std::string hint = closest_match(key, profile_keys());
  throw Error(fmt::format("{}: unknown key{}", what,
                          hint.empty() ? "" : fmt::format("; did you mean '{}'?", hint)));
}

Profile load_yaml(const std::string& path) {
  std::error_code error;
  if (!std::filesystem::exists(path, error)) {
    throw Error(fmt::format("cannot read profile {}", path));
  }
  kube::YamlFile file(path);
  std::vector<std::pair<std::string, const kube::YamlNode*>> items;
  flatten(file, file.root(), "", items);
  std::string base = "gke";
  for (const auto& [key, value] : items) {
    if (key == "base") {
      base = file.scalar(*value, "a profile name");
    }
  }
  Profile profile = builtin(base);
  profile.name = path;
  for (const auto& [key, value] : items) {
    if (key != "base") {
      apply_key(profile, file, key, *value);
    }
  }
  return profile;
}

}  // namespace

std::string_view to_string(Dataplane dataplane) {
  return kDataplaneNames[static_cast<size_t>(dataplane)];
}

Dataplane dataplane_from_string(std::string_view text, std::string_view what) {
  if (auto dataplane = enum_from_name<Dataplane>(kDataplaneNames, text)) {
    return *dataplane;
  }
  std::vector<std::string_view> names(kDataplaneNames.begin(), kDataplaneNames.end());
  std::string hint = closest_match(text, names);
  throw Error(fmt::format("{}: unknown dataplane '{}'{}", what, text,
                          hint.empty()
                              ? " (kube-proxy-iptables, kube-proxy-nftables, kube-proxy-ipvs, "
                                "ingress-nginx, cloud-lb)"
                              : fmt::format("; did you mean '{}'?", hint)));
}

std::vector<std::string_view> builtin_profiles() {
  return {"gke", "eks", "kind", "lab"};
}

std::vector<std::string_view> profile_keys() {
  std::vector<std::string_view> names;
  for (const Key& k : keys()) {
    names.push_back(k.name);
  }
  return names;
}

Profile load_profile(std::string_view name_or_path) {
  if (name_or_path.ends_with(".yaml") || name_or_path.ends_with(".yml")) {
    return load_yaml(std::string(name_or_path));
  }
  return builtin(name_or_path);
}

}  // namespace zerodrop::sim
