#include "lab/kernel/kube_proxy_nft.h"

#include <sched.h>
#include <unistd.h>

#include <thread>

#include <gtest/gtest.h>

#include "base/error.h"
#include "lab/kernel/kube_proxy_iptables.h"
#include "lab/kernel/kube_proxy_rules.h"
#include "lab/kernel/nft_shell.h"
#include "lab/kernel/node_network.h"

namespace zerodrop::lab {
namespace {

Endpoint endpoint(const std::string& pod, const std::string& ip) {
  return {pod, ip, 8080, {true, true, false}};
}

size_t count(const std::string& text, const std::string& what) {
  size_t n = 0;
  for (size_t at = text.find(what); at != std::string::npos; at = text.find(what, at + 1)) {
    ++n;
  }
  return n;
}

const ClusterService kService;

TEST(KubeProxyNft, BaseRejectsTheServiceUntilItHasAnEndpoint) {
  std::string base = nft_base_ruleset(kService);
  EXPECT_NE(base.find("add element ip kube-proxy service-ips { 10.96.0.10 . tcp . 80 : goto "
                      "service-default/web/tcp/http }"),
            std::string::npos);
  EXPECT_NE(base.find("add element ip kube-proxy no-endpoint-services { 10.96.0.10 . tcp . 80 : "
                      "goto reject-chain }"),
            std::string::npos);
  EXPECT_NE(base.find("type nat hook output priority -100"), std::string::npos);
}

TEST(KubeProxyNft, FirstEndpointsGetChainsARandomChoiceAndLeaveTheRejectMap) {
  std::string update =
      nft_update(kService, {}, {endpoint("pod-1", "10.200.0.2"), endpoint("pod-2", "10.200.0.3")});
  EXPECT_EQ(count(update, "add chain ip kube-proxy endpoint-"), 2u);
  EXPECT_NE(update.find("dnat to 10.200.0.2:8080"), std::string::npos);
  EXPECT_NE(update.find("numgen random mod 2 vmap { 0 : goto "
                        "endpoint-default/web/tcp/http__10.200.0.2/8080 , 1 : goto "
                        "endpoint-default/web/tcp/http__10.200.0.3/8080 }"),
            std::string::npos);
  EXPECT_NE(update.find("delete element ip kube-proxy no-endpoint-services"), std::string::npos);
}

TEST(KubeProxyNft, ARemovedEndpointLeavesTheChoiceThenItsChainIsDeleted) {
  std::vector<Endpoint> two = {endpoint("pod-1", "10.200.0.2"), endpoint("pod-2", "10.200.0.3")};
  std::string update = nft_update(kService, two, {two[1]});
  EXPECT_EQ(count(update, "add chain"), 0u);  // pod-2's chain exists already
  size_t rewritten = update.find(
      "numgen random mod 1 vmap { 0 : goto "
      "endpoint-default/web/tcp/http__10.200.0.3/8080 }");
  size_t deleted = update.find(
      "delete chain ip kube-proxy "
      "endpoint-default/web/tcp/http__10.200.0.2/8080");
  ASSERT_NE(rewritten, std::string::npos);
  ASSERT_NE(deleted, std::string::npos);
  EXPECT_LT(update.find("flush chain"), rewritten);
  EXPECT_LT(rewritten, deleted);  // no rule refers to a chain when it goes
  EXPECT_EQ(update.find("no-endpoint-services"), std::string::npos);
}

TEST(KubeProxyNft, TheLastEndpointGoneRejectsAgain) {
  std::string update = nft_update(kService, {endpoint("pod-1", "10.200.0.2")}, {});
  EXPECT_EQ(update.find("numgen"), std::string::npos);
  EXPECT_NE(update.find("add element ip kube-proxy no-endpoint-services"), std::string::npos);
}

// The kernel takes every script of a rollout, each as one transaction (in a network namespace of
// its own thread: root and Debian's nftables only).
TEST(KubeProxyNft, TheKernelAcceptsARolloutsTransactions) {
  if (::geteuid() != 0 || ::access("/usr/sbin/nft", X_OK) != 0) {
    GTEST_SKIP() << "needs root and nft (package nftables) for a network namespace's rules";
  }
  std::vector<std::string> errors;
  std::thread([&] {
    if (::unshare(CLONE_NEWNET) != 0) {
      errors.push_back("unshare failed");
      return;
    }
    NftShell nft;
    Endpoint a = endpoint("pod-1", "10.200.0.2");
    Endpoint b = endpoint("pod-2", "10.200.0.3");
    Endpoint c = endpoint("pod-3", "10.200.0.4");
    for (const std::string& script :
         {nft_base_ruleset(kService), nft_update(kService, {}, {a}),
          nft_update(kService, {a}, {a, b}), nft_update(kService, {a, b}, {b}),
          nft_update(kService, {b}, {b, c}), nft_update(kService, {b, c}, {c}),
          nft_update(kService, {c}, {})}) {
      if (std::string error = nft.commit(script); !error.empty()) {
        errors.push_back(script + error);
      }
    }
  }).join();
  EXPECT_TRUE(errors.empty()) << errors.front();
}

TEST(KubeProxyIptables, BaseJumpsToTheServiceChainAndRejectsItUntilItHasAnEndpoint) {
  std::string base = iptables_base_ruleset(kService);
  EXPECT_NE(base.find("-A PREROUTING -j KUBE-SERVICES\n-A OUTPUT -j KUBE-SERVICES\n"),
            std::string::npos);
  EXPECT_NE(base.find("-A KUBE-SERVICES -d 10.96.0.10/32 -p tcp -m tcp --dport 80 -j KUBE-SVC-"),
            std::string::npos);
  EXPECT_NE(base.find("*filter\n:KUBE-SERVICES - [0:0]\n"), std::string::npos);
  EXPECT_NE(base.find("--dport 80 -j REJECT --reject-with icmp-port-unreachable"),
            std::string::npos);
}

// Endpoint i of k is taken with probability 1/(k-i), the last unconditionally: uniform overall.
TEST(KubeProxyIptables, EndpointsArePickedInOrderByStatisticWithTheLastUnconditional) {
  Endpoint a = endpoint("pod-1", "10.200.0.2");
  Endpoint b = endpoint("pod-2", "10.200.0.3");
  Endpoint c = endpoint("pod-3", "10.200.0.4");
  std::string update = iptables_update(kService, {}, {a, b, c});
  EXPECT_EQ(count(update, "-j DNAT --to-destination"), 3u);
  size_t third = update.find("--probability 0.3333333333 -j KUBE-SEP-");
  size_t half = update.find("--probability 0.5000000000 -j KUBE-SEP-");
  ASSERT_NE(third, std::string::npos) << update;
  ASSERT_NE(half, std::string::npos) << update;
  EXPECT_LT(third, half);
  EXPECT_EQ(count(update, "--probability"), 2u);
  EXPECT_NE(update.find("*filter\n-D KUBE-SERVICES"), std::string::npos);  // first endpoints
  std::string steady = iptables_update(kService, {a, b, c}, {b, c});
  EXPECT_EQ(count(steady, "-X KUBE-SEP-"), 1u);
  EXPECT_EQ(count(steady, "-j DNAT"), 0u);
  EXPECT_EQ(steady.find("*filter"), std::string::npos);  // the REJECT is not touched
  std::string none = iptables_update(kService, {c}, {});
  EXPECT_NE(none.find("*filter\n-A KUBE-SERVICES"), std::string::npos);
}

// The kernel takes every input of a rollout through iptables-restore (root and package iptables).
TEST(KubeProxyIptables, TheKernelAcceptsARolloutsRestores) {
  if (::geteuid() != 0 || ::access("/usr/sbin/iptables-restore", X_OK) != 0) {
    GTEST_SKIP() << "needs root and iptables-restore (package iptables) for a namespace's rules";
  }
  std::vector<std::string> errors;
  std::thread([&] {
    if (::unshare(CLONE_NEWNET) != 0) {
      errors.push_back("unshare failed");
      return;
    }
    std::unique_ptr<KubeProxyRules> rules = iptables_rules();
    Endpoint a = endpoint("pod-1", "10.200.0.2");
    Endpoint b = endpoint("pod-2", "10.200.0.3");
    std::vector<std::vector<Endpoint>> steps = {{}, {a}, {a, b}, {b}, {}};
    if (std::string error = rules->program_base(kService); !error.empty()) {
      errors.push_back(error);
    }
    for (size_t i = 1; i < steps.size(); ++i) {
      if (std::string error = rules->program_update(kService, steps[i - 1], steps[i]);
          !error.empty()) {
        errors.push_back(iptables_update(kService, steps[i - 1], steps[i]) + error);
      }
    }
  }).join();
  EXPECT_TRUE(errors.empty()) << errors.front();
}

// A missing tool is named with the dataplane the user chose, not another one.
TEST(KubeProxyRules, AMissingToolNamesTheDataplane) {
  for (Dataplane dataplane : {Dataplane::iptables, Dataplane::nftables}) {
    std::string want = dataplane_flag(dataplane) + " needs zerodrop-no-such-tool (";
    try {
      run_tool(dataplane, {"zerodrop-no-such-tool"}, "", "no-such-package");
      ADD_FAILURE() << "a missing tool ran";
    } catch (const Error& e) {
      EXPECT_EQ(std::string(e.what()).rfind(want, 0), 0u) << e.what();
    }
  }
  EXPECT_EQ(dataplane_flag(Dataplane::iptables), "--dataplane iptables");
}

}  // namespace
}  // namespace zerodrop::lab
