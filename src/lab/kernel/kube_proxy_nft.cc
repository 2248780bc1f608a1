#include "lab/kernel/kube_proxy_nft.h"

#include <algorithm>

#include <fmt/format.h>
#include <fmt/ranges.h>

#include "lab/kernel/kube_proxy_rules.h"
#include "lab/kernel/nft_shell.h"
#include "lab/routers/router.h"

namespace zerodrop::lab {
namespace {

std::string service_chain(const ClusterService& s) {
  return "service-" + s.name;
}

std::string endpoint_chain(const ClusterService& s, const Endpoint& e) {
  return fmt::format("endpoint-{}__{}/{}", s.name, e.ip, e.port);
}

// The Service's key in kube-proxy's verdict maps: address . protocol . port.
std::string service_key(const ClusterService& s) {
  return fmt::format("{} . tcp . {}", s.ip, s.port);
}

bool contains(const std::vector<Endpoint>& list, const Endpoint& e) {
  return std::any_of(list.begin(), list.end(),
                     [&](const Endpoint& x) { return x.ip == e.ip && x.port == e.port; });
}

// One nft kept running (NftShell): each change one transaction on its input.
class NftRules final : public KubeProxyRules {
public:
  std::string program_base(const ClusterService& service) override {
    if (std::string why = nft_.commit(nft_base_ruleset(service)); !why.empty()) {
      return fmt::format(
          "{}: the kernel refused kube-proxy's table (nf_tables with nat needed): {}",
          dataplane_flag(Dataplane::nftables), why);
    }
    return {};
  }

  std::string program_update(const ClusterService& service, const std::vector<Endpoint>& before,
                             const std::vector<Endpoint>& after) override {
    return nft_.commit(nft_update(service, before, after));
  }

private:
  NftShell nft_;
};

}  // namespace

std::unique_ptr<KubeProxyRules> nft_rules() {
  return std::make_unique<NftRules>();
}

std::string nft_base_ruleset(const ClusterService& s) {
  constexpr const char* kMap = "{ type ipv4_addr . inet_proto . inet_service : verdict ; }";
  std::string out = "add table ip kube-proxy\n";
  out += "add chain ip kube-proxy filter-output { type filter hook output priority -110 ; }\n";
  out += "add chain ip kube-proxy nat-output { type nat hook output priority -100 ; }\n";
  out += "add chain ip kube-proxy services\n";
  out += "add chain ip kube-proxy service-endpoints-check\n";
  out += "add chain ip kube-proxy reject-chain\n";
  out += "add rule ip kube-proxy reject-chain reject\n";
  out += fmt::format("add map ip kube-proxy service-ips {}\n", kMap);
  out += fmt::format("add map ip kube-proxy no-endpoint-services {}\n", kMap);
  out += "add rule ip kube-proxy filter-output ct state new jump service-endpoints-check\n";
  out +=
      "add rule ip kube-proxy service-endpoints-check ip daddr . meta l4proto . th dport "
      "vmap @no-endpoint-services\n";
  out += "add rule ip kube-proxy nat-output jump services\n";
  out += "add rule ip kube-proxy services ip daddr . meta l4proto . th dport vmap @service-ips\n";
  out += fmt::format("add chain ip kube-proxy {}\n", service_chain(s));
  out += fmt::format("add element ip kube-proxy service-ips {{ {} : goto {} }}\n", service_key(s),
                     service_chain(s));
  out +=
      fmt::format("add element ip kube-proxy no-endpoint-services {{ {} : goto reject-chain }}\n",
                  service_key(s));
  return out;
}

std::string nft_update(const ClusterService& s, const std::vector<Endpoint>& before,
                       const std::vector<Endpoint>& after) {
  std::string out;
  for (const Endpoint& e : after) {
    if (!contains(before, e)) {
      out += fmt::format("add chain ip kube-proxy {}\n", endpoint_chain(s, e));
      out += fmt::format("add rule ip kube-proxy {} meta l4proto tcp dnat to {}:{}\n",
                         endpoint_chain(s, e), e.ip, e.port);
    }
  }
  out += fmt::format("flush chain ip kube-proxy {}\n", service_chain(s));
  if (!after.empty()) {
    std::vector<std::string> arms;
    for (size_t i = 0; i < after.size(); ++i) {
      arms.push_back(fmt::format("{} : goto {}", i, endpoint_chain(s, after[i])));
    }
    out += fmt::format("add rule ip kube-proxy {} numgen random mod {} vmap {{ {} }}\n",
                       service_chain(s), after.size(), fmt::join(arms, " , "));
  }
  for (const Endpoint& e : before) {
    if (!contains(after, e)) {
      out += fmt::format("delete chain ip kube-proxy {}\n", endpoint_chain(s, e));
    }
  }
  if (before.empty() && !after.empty()) {
    out +=
        fmt::format("delete element ip kube-proxy no-endpoint-services {{ {} }}\n", service_key(s));
  } else if (!before.empty() && after.empty()) {
    out +=
        fmt::format("add element ip kube-proxy no-endpoint-services {{ {} : goto reject-chain }}\n",
                    service_key(s));
  }
  return out;
}

}  // namespace zerodrop::lab
