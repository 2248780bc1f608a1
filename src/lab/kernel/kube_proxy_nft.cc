#include "lab/kernel/kube_proxy_nft.h"

#include <algorithm>
#include <map>

#include <fmt/format.h>
#include <fmt/ranges.h>

#include "lab/kernel/kube_proxy_rules.h"
#include "lab/kernel/nft_shell.h"
#include "lab/routers/router.h"

namespace zerodrop::lab {
namespace {

// The Service's key in kube-proxy's verdict maps: address . protocol . port.
std::string service_key(const ClusterService& s) {
  return fmt::format("{} . tcp . {}", s.ip, s.port);
}

bool contains(const std::vector<Endpoint>& list, const Endpoint& e) {
  return std::any_of(list.begin(), list.end(),
                     [&](const Endpoint& x) { return x.ip == e.ip && x.port == e.port; });
}

// The Service's dispatch rule: one endpoint chain at random (no rule without endpoints).
std::string dispatch_rule(const ClusterService& s, const std::string& chain,
                          const std::vector<Endpoint>& after) {
  if (after.empty()) {
    return {};
  }
  std::vector<std::string> arms;
  for (size_t i = 0; i < after.size(); ++i) {
    arms.push_back(fmt::format("{} : goto {}", i, nft_endpoint_chain(s, after[i])));
  }
  return fmt::format("add rule ip kube-proxy {} numgen random mod {} vmap {{ {} }}\n", chain,
                     after.size(), fmt::join(arms, " , "));
}

std::string endpoint_rule(const ClusterService& s, const Endpoint& e) {
  return fmt::format("add rule ip kube-proxy {} meta l4proto tcp dnat to {}:{}\n",
                     nft_endpoint_chain(s, e), e.ip, e.port);
}

// The Service in or out of `no-endpoint-services` as it gains its first endpoint or loses its
// last.
std::string reject_change(const ClusterService& s, const std::vector<Endpoint>& before,
                          const std::vector<Endpoint>& after) {
  if (before.empty() && !after.empty()) {
    return fmt::format("delete element ip kube-proxy no-endpoint-services {{ {} }}\n",
                       service_key(s));
  }
  if (!before.empty() && after.empty()) {
    return fmt::format(
        "add element ip kube-proxy no-endpoint-services {{ {} : goto reject-chain }}\n",
        service_key(s));
  }
  return {};
}

// kube-proxy deletes a chain it stopped using at its first sync more than a second later (on
// kernels before 6.2 a chain a map element stopped naming is seen unreferenced a moment late).
constexpr auto kStaleFor = std::chrono::seconds(1);

// One nft kept running (NftShell): each change one transaction on its input, in the shape of
// `sync`; chains stopped being used are deleted by a transaction of their own at the first
// change more than kStaleFor later.
class NftRules final : public KubeProxyRules {
public:
  explicit NftRules(DataplaneSync sync) : sync_(sync) {}

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
    std::string stale_error = delete_stale();
    auto now = std::chrono::steady_clock::now();
    std::string error;
    if (sync_ == DataplaneSync::kube_proxy) {
      error = nft_.commit(nft_update(service, before, after));
    } else {
      std::vector<Endpoint> existing;
      for (const Endpoint& e : after) {
        if (stale_.contains(nft_endpoint_chain(service, e))) {
          existing.push_back(e);
        }
      }
      error = nft_.commit(nft_atomic_update(service, before, after, existing, generation_ + 1));
      if (error.empty() && generation_++ > 0) {  // generation 0 is the Service's own chain
        stale_[nft_service_chain(service, generation_ - 1)] = now;
      }
    }
    if (error.empty()) {
      for (const Endpoint& e : before) {
        if (!contains(after, e)) {
          stale_[nft_endpoint_chain(service, e)] = now;
        }
      }
      for (const Endpoint& e : after) {
        stale_.erase(nft_endpoint_chain(service, e));
      }
    }
    return error.empty() ? stale_error : error;
  }

private:
  // The transaction deleting the chains stale for more than kStaleFor: "" or its error.
  std::string delete_stale() {
    auto now = std::chrono::steady_clock::now();
    std::vector<std::string> old;
    for (auto it = stale_.begin(); it != stale_.end();) {
      if (now - it->second > kStaleFor) {
        old.push_back(it->first);
        it = stale_.erase(it);
      } else {
        ++it;
      }
    }
    return old.empty() ? "" : nft_.commit(nft_delete_chains(old));
  }

  DataplaneSync sync_;
  NftShell nft_;
  int generation_ = 0;  // atomic: the Service chain's generation in use
  std::map<std::string, std::chrono::steady_clock::time_point> stale_;  // chain → since
};

}  // namespace

std::unique_ptr<KubeProxyRules> nft_rules(DataplaneSync sync) {
  return std::make_unique<NftRules>(sync);
}

std::string nft_service_chain(const ClusterService& s, int generation) {
  return generation == 0 ? "service-" + s.name : fmt::format("service-{}.g{}", s.name, generation);
}

std::string nft_endpoint_chain(const ClusterService& s, const Endpoint& e) {
  return fmt::format("endpoint-{}__{}/{}", s.name, e.ip, e.port);
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
  out += fmt::format("add chain ip kube-proxy {}\n", nft_service_chain(s, 0));
  out += fmt::format("add element ip kube-proxy service-ips {{ {} : goto {} }}\n", service_key(s),
                     nft_service_chain(s, 0));
  out +=
      fmt::format("add element ip kube-proxy no-endpoint-services {{ {} : goto reject-chain }}\n",
                  service_key(s));
  return out;
}

std::string nft_update(const ClusterService& s, const std::vector<Endpoint>& before,
                       const std::vector<Endpoint>& after) {
  // kube-proxy's ensureChain: add and flush each chain it writes, then its rules.
  std::string out;
  for (const Endpoint& e : after) {
    out += fmt::format("add chain ip kube-proxy {0}\nflush chain ip kube-proxy {0}\n",
                       nft_endpoint_chain(s, e));
  }
  out += fmt::format("add chain ip kube-proxy {0}\nflush chain ip kube-proxy {0}\n",
                     nft_service_chain(s, 0));
  out += dispatch_rule(s, nft_service_chain(s, 0), after);
  for (const Endpoint& e : after) {
    out += endpoint_rule(s, e);
  }
  for (const Endpoint& e : before) {
    if (!contains(after, e)) {
      out += fmt::format("flush chain ip kube-proxy {}\n", nft_endpoint_chain(s, e));
    }
  }
  return out + reject_change(s, before, after);
}

std::string nft_atomic_update(const ClusterService& s, const std::vector<Endpoint>& before,
                              const std::vector<Endpoint>& after,
                              const std::vector<Endpoint>& existing, int generation) {
  std::string out;
  for (const Endpoint& e : after) {
    if (!contains(before, e) && !contains(existing, e)) {
      out += fmt::format("add chain ip kube-proxy {}\n", nft_endpoint_chain(s, e));
      out += endpoint_rule(s, e);
    }
  }
  std::string chain = nft_service_chain(s, generation);
  out += fmt::format("add chain ip kube-proxy {}\n", chain);
  out += dispatch_rule(s, chain, after);
  // service-ips keeps pointing to the Service's chain, whose one rule, a plain goto with no set,
  // is replaced. (Swapping the map element itself lost a connect in docs/dataplane-sync.md.)
  out += fmt::format("flush chain ip kube-proxy {0}\nadd rule ip kube-proxy {0} goto {1}\n",
                     nft_service_chain(s, 0), chain);
  return out + reject_change(s, before, after);
}

std::string nft_delete_chains(const std::vector<std::string>& chains) {
  std::string out;
  for (const std::string& c : chains) {
    out += fmt::format("flush chain ip kube-proxy {}\n", c);
  }
  for (const std::string& c : chains) {
    out += fmt::format("delete chain ip kube-proxy {}\n", c);
  }
  return out;
}

}  // namespace zerodrop::lab
