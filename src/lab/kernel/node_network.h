#pragma once

#include <memory>
#include <string>
#include <vector>

#include "lab/routers/router.h"

namespace zerodrop::lab {

// Runs `argv` (argv[0] found in PATH) in the calling thread's network namespace with `input` on
// its stdin: "" when it exits 0, else its stderr (or "failed"). Throws Error naming `dataplane`,
// the program and its Debian `package` when it cannot run.
std::string run_tool(Dataplane dataplane, const std::vector<std::string>& argv,
                     const std::string& input, const std::string& package);

// Pods of a lab without a node network get 127.B.C.D. B (20..219) is claimed for the life of
// the process, from `first` on (the lab passes its pid modulo 200): the first B whose abstract
// unix socket "@zerodrop-lab-127.B" no other process holds, so that labs running side by side
// (the end-to-end tests, a few at a time) never share a pod's address. The kernel drops the claim
// when the process ends, also on SIGKILL. Returns B and the descriptor that holds it (close it to
// give B back); throws Error when every B is held or no socket can be made.
struct LoopbackClaim {
  int b = 0;
  int fd = -1;
};

LoopbackClaim claim_loopback_prefix(int first);

// The lab's nodes as network namespaces for `--dataplane nftables` or `iptables` (root). Node N is
// a network namespace joined to the host by a veth pair (eth0 inside, 10.B.255.N; the host's end
// 10.B.254.N). Pods stay processes of the host's namespace on 10.B.C.D, C < 128: one local route
// 10.B.0.0/17 on node 1's host end makes every such address the host's own, so a pod binds it and
// a node reaches it through its veth. B (200..249) is the first whose route no other lab holds.
// Nothing is named: the namespaces live as long as this object's descriptors (and the lab's
// threads and sockets in them), so the kernel removes them, their veths, the route, their rules
// and conntrack entries when the lab ends, also when it is SIGKILLed.
class NodeNetwork {
public:
  // Creates `nodes` namespaces for `dataplane`. Throws Error naming the dataplane and what is
  // missing: root, iproute2's `ip`, a free 10.B.0.0/17.
  static std::unique_ptr<NodeNetwork> create(int nodes, Dataplane dataplane);
  ~NodeNetwork();
  NodeNetwork(const NodeNetwork&) = delete;
  NodeNetwork& operator=(const NodeNetwork&) = delete;

  // "10.B.": the pods' addresses are 10.B.C.D.
  const std::string& pod_prefix() const { return pod_prefix_; }

  // Node `i`'s (1-based) namespace descriptor, for setns(2).
  int netns(int i) const { return nodes_.at(static_cast<size_t>(i - 1)).fd; }

  // Node `i`'s address: the source of its connections to pods.
  const std::string& address(int i) const { return nodes_.at(static_cast<size_t>(i - 1)).address; }

private:
  struct Node {
    int fd = -1;
    std::string address;
    std::string host_veth;  // zd<pid>.<run>.<N> (at most 15 bytes), the end in the host's namespace
  };

  NodeNetwork() = default;
  void add_node(int index);
  void claim_prefix();
  void address_node(int index);

  std::vector<Node> nodes_;
  Dataplane dataplane_ = Dataplane::nftables;  // named in every error
  int host_ = -1;                              // the host's namespace
  int b_ = 0;
  int generation_ = 0;  // this process's runs, modulo 100
  std::string pod_prefix_;
};

// Whether `--dataplane nftables` can run here: root, a build with libnftables, and the kernel's
// nf_tables (with nat) and conntrack events in a new network namespace. Throws Error naming the
// one that is missing.
void check_nftables();

// The same for `--dataplane iptables`: root, iptables-restore, and kube-proxy's iptables chains
// (statistic, DNAT, REJECT) accepted in a new network namespace.
void check_iptables();

}  // namespace zerodrop::lab
