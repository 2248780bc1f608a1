// kube-proxy's iptables mode for the kernel nodes: the rules as iptables-restore input, and the
// KubeProxyRules that runs `iptables-restore --noflush` once per change. iptables-restore reads
// one input and exits (no interactive mode as nft's), so each change is one process: a few ms.
#include "lab/kernel/kube_proxy_iptables.h"

#include <algorithm>

#include <fmt/format.h>

#include "lab/kernel/kube_proxy_rules.h"
#include "lab/kernel/node_network.h"

namespace zerodrop::lab {
namespace {

// kube-proxy names its chains by a hash of the service port (and endpoint): chain names are at
// most 28 characters. FNV-1a, 16 hex digits.
std::string chain_hash(const std::string& text) {
  uint64_t h = 14695981039346656037ULL;
  for (unsigned char c : text) {
    h = (h ^ c) * 1099511628211ULL;
  }
  return fmt::format("{:016X}", h);
}

std::string svc_chain(const ClusterService& s) {
  return "KUBE-SVC-" + chain_hash(s.name);
}

std::string sep_chain(const ClusterService& s, const Endpoint& e) {
  return "KUBE-SEP-" + chain_hash(fmt::format("{}/{}:{}", s.name, e.ip, e.port));
}

std::string service_match(const ClusterService& s) {
  return fmt::format("-d {}/32 -p tcp -m tcp --dport {}", s.ip, s.port);
}

std::string reject_rule(const ClusterService& s) {
  return fmt::format("KUBE-SERVICES {} -j REJECT --reject-with icmp-port-unreachable\n",
                     service_match(s));
}

bool has_endpoint(const std::vector<Endpoint>& list, const Endpoint& e) {
  return std::any_of(list.begin(), list.end(),
                     [&](const Endpoint& x) { return x.ip == e.ip && x.port == e.port; });
}

class IptablesRules final : public KubeProxyRules {
public:
  std::string program_base(const ClusterService& service) override {
    if (std::string why = restore(iptables_base_ruleset(service)); !why.empty()) {
      return fmt::format(
          "{}: the kernel refused kube-proxy's chains (nf_tables with nat, xt_statistic, REJECT "
          "needed): {}",
          dataplane_flag(Dataplane::iptables), why);
    }
    return {};
  }

  std::string program_update(const ClusterService& service, const std::vector<Endpoint>& before,
                             const std::vector<Endpoint>& after) override {
    return restore(iptables_update(service, before, after));
  }

private:
  // Throws Error when iptables-restore cannot run.
  static std::string restore(const std::string& input) {
    return run_tool(Dataplane::iptables, {"iptables-restore", "--noflush"}, input, "iptables");
  }
};

}  // namespace

std::string iptables_base_ruleset(const ClusterService& s) {
  std::string out = "*nat\n:KUBE-SERVICES - [0:0]\n";
  out += fmt::format(":{} - [0:0]\n", svc_chain(s));
  out += "-A PREROUTING -j KUBE-SERVICES\n-A OUTPUT -j KUBE-SERVICES\n";
  out += fmt::format("-A KUBE-SERVICES {} -j {}\nCOMMIT\n", service_match(s), svc_chain(s));
  out += "*filter\n:KUBE-SERVICES - [0:0]\n";
  out += "-A OUTPUT -m conntrack --ctstate NEW -j KUBE-SERVICES\n";
  out += "-A " + reject_rule(s) + "COMMIT\n";
  return out;
}

std::string iptables_update(const ClusterService& s, const std::vector<Endpoint>& before,
                            const std::vector<Endpoint>& after) {
  // With --noflush, declaring a chain flushes it: the service chain is rewritten whole.
  std::string out = fmt::format("*nat\n:{} - [0:0]\n", svc_chain(s));
  for (const Endpoint& e : after) {
    if (!has_endpoint(before, e)) {
      out += fmt::format(":{0} - [0:0]\n-A {0} -p tcp -j DNAT --to-destination {1}:{2}\n",
                         sep_chain(s, e), e.ip, e.port);
    }
  }
  for (size_t i = 0; i < after.size(); ++i) {
    size_t left = after.size() - i;
    std::string pick =
        left == 1 ? ""
                  : fmt::format("-m statistic --mode random --probability {:.10f} ", 1.0 / left);
    out += fmt::format("-A {} {}-j {}\n", svc_chain(s), pick, sep_chain(s, after[i]));
  }
  for (const Endpoint& e : before) {
    if (!has_endpoint(after, e)) {
      out += fmt::format(":{0} - [0:0]\n-X {0}\n", sep_chain(s, e));
    }
  }
  out += "COMMIT\n";
  if (before.empty() != after.empty()) {
    out += fmt::format("*filter\n-{} {}COMMIT\n", after.empty() ? "A" : "D", reject_rule(s));
  }
  return out;
}

std::unique_ptr<KubeProxyRules> iptables_rules() {
  return std::make_unique<IptablesRules>();
}

}  // namespace zerodrop::lab
