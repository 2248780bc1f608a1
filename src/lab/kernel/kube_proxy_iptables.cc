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

// The atomic shape's two dispatch chains, KUBE-SVA-<hash> for odd generations and KUBE-SVB-
// for even ones.
std::string dispatch_chain(const ClusterService& s, int generation) {
  return (generation % 2 == 1 ? "KUBE-SVA-" : "KUBE-SVB-") + chain_hash(s.name);
}

// `chain`'s rules picking one of `after` in order: endpoint i of k with probability 1/(k-i), the
// last unconditionally (uniform overall).
std::string pick_rules(const ClusterService& s, const std::string& chain,
                       const std::vector<Endpoint>& after) {
  std::string out;
  for (size_t i = 0; i < after.size(); ++i) {
    size_t left = after.size() - i;
    std::string pick =
        left == 1 ? ""
                  : fmt::format("-m statistic --mode random --probability {:.10f} ", 1.0 / left);
    out += fmt::format("-A {} {}-j {}\n", chain, pick, sep_chain(s, after[i]));
  }
  return out;
}

std::string dnat_rule(const ClusterService& s, const Endpoint& e) {
  return fmt::format("-A {} -p tcp -j DNAT --to-destination {}:{}\n", sep_chain(s, e), e.ip,
                     e.port);
}

// Each change one iptables-restore run, in the shape of `sync`. The atomic shape remembers
// which dispatch chain is in use and the KUBE-SEP chains to delete at the next change.
class IptablesRules final : public KubeProxyRules {
public:
  explicit IptablesRules(DataplaneSync sync) : sync_(sync) {}

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
    if (sync_ == DataplaneSync::kube_proxy) {
      return restore(iptables_update(service, before, after));
    }
    std::vector<Endpoint> gone;
    for (const Endpoint& e : gone_before_) {
      if (!has_endpoint(after, e)) {
        gone.push_back(e);
      }
    }
    std::string error =
        restore(iptables_atomic_update(service, before, after, gone, generation_ + 1));
    if (error.empty()) {
      ++generation_;
      gone_before_.clear();
      for (const Endpoint& e : before) {
        if (!has_endpoint(after, e)) {
          gone_before_.push_back(e);
        }
      }
    }
    return error;
  }

private:
  // Throws Error when iptables-restore cannot run.
  static std::string restore(const std::string& input) {
    return run_tool(Dataplane::iptables, {"iptables-restore", "--noflush"}, input, "iptables");
  }

  DataplaneSync sync_;
  int generation_ = 0;                 // atomic: the dispatch chain in use (0: the base's)
  std::vector<Endpoint> gone_before_;  // atomic: endpoints the last change removed
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
  // With --noflush, a chain line flushes the chain: kube-proxy redeclares and refills filter's and
  // nat's KUBE-SERVICES, the Service's KUBE-SVC and every KUBE-SEP of it at each sync.
  std::string out = "*filter\n:KUBE-SERVICES - [0:0]\n";
  if (after.empty()) {
    out += "-A " + reject_rule(s);
  }
  out += fmt::format("COMMIT\n*nat\n:KUBE-SERVICES - [0:0]\n:{} - [0:0]\n", svc_chain(s));
  for (const Endpoint& e : after) {
    out += fmt::format(":{} - [0:0]\n", sep_chain(s, e));
  }
  for (const Endpoint& e : before) {
    if (!has_endpoint(after, e)) {
      out += fmt::format(":{} - [0:0]\n", sep_chain(s, e));
    }
  }
  if (!after.empty()) {
    out += fmt::format("-A KUBE-SERVICES {} -j {}\n", service_match(s), svc_chain(s));
  }
  out += pick_rules(s, svc_chain(s), after);
  for (const Endpoint& e : after) {
    out += dnat_rule(s, e);
  }
  for (const Endpoint& e : before) {
    if (!has_endpoint(after, e)) {
      out += fmt::format("-X {}\n", sep_chain(s, e));
    }
  }
  return out + "COMMIT\n";
}

std::string iptables_atomic_update(const ClusterService& s, const std::vector<Endpoint>& before,
                                   const std::vector<Endpoint>& after,
                                   const std::vector<Endpoint>& gone_earlier, int generation) {
  // The dispatch alternates between two chains: this change fills the one no rule points to
  // (flushing it is safe: nothing can be traversing it), then moves KUBE-SERVICES' one rule to it.
  std::string target = dispatch_chain(s, generation);
  std::string out = fmt::format("*nat\n:{} - [0:0]\n", target);
  for (const Endpoint& e : after) {
    if (!has_endpoint(before, e)) {
      out += fmt::format(":{} - [0:0]\n", sep_chain(s, e)) + dnat_rule(s, e);
    }
  }
  out += pick_rules(s, target, after);
  out += fmt::format("-R KUBE-SERVICES 1 {} -j {}\n", service_match(s), target);
  if (generation == 2) {  // the base's chain, unused since the first change
    out += fmt::format(":{0} - [0:0]\n-X {0}\n", svc_chain(s));
  }
  // Gone at the change before: the chain that still named them was flushed just above.
  for (const Endpoint& e : gone_earlier) {
    out += fmt::format(":{0} - [0:0]\n-X {0}\n", sep_chain(s, e));
  }
  out += "COMMIT\n";
  if (before.empty() != after.empty()) {
    out += fmt::format("*filter\n-{} {}COMMIT\n", after.empty() ? "A" : "D", reject_rule(s));
  }
  return out;
}

std::unique_ptr<KubeProxyRules> iptables_rules(DataplaneSync sync) {
  return std::make_unique<IptablesRules>(sync);
}

}  // namespace zerodrop::lab
