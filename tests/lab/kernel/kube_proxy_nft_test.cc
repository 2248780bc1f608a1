#include "lab/kernel/kube_proxy_nft.h"

#include <sched.h>
#include <unistd.h>

#include <algorithm>
#include <thread>

#include <fmt/format.h>
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

// kube-proxy's partial sync: every chain it writes is added and flushed first (the Service's
// chain is empty inside the transaction), the gone endpoint's chain only flushed (deleted later).
TEST(KubeProxyNft, ASyncFlushesAndRefillsEveryChainOfTheService) {
  std::vector<Endpoint> two = {endpoint("pod-1", "10.200.0.2"), endpoint("pod-2", "10.200.0.3")};
  std::string update = nft_update(kService, two, {two[1]});
  const std::string pod2 = "endpoint-default/web/tcp/http__10.200.0.3/8080";
  const std::string pod1 = "endpoint-default/web/tcp/http__10.200.0.2/8080";
  size_t flush_service = update.find("flush chain ip kube-proxy service-default/web/tcp/http\n");
  size_t rewritten = update.find("numgen random mod 1 vmap { 0 : goto " + pod2 + " }");
  ASSERT_NE(flush_service, std::string::npos) << update;
  ASSERT_NE(rewritten, std::string::npos) << update;
  EXPECT_LT(flush_service, rewritten);
  EXPECT_LT(update.find("flush chain ip kube-proxy " + pod2), update.find("dnat to 10.200.0.3"));
  EXPECT_GT(update.find("flush chain ip kube-proxy " + pod1), rewritten);
  EXPECT_EQ(update.find("delete chain"), std::string::npos);
  EXPECT_EQ(update.find("no-endpoint-services"), std::string::npos);
}

// The atomic shape: new chains whole, then the Service's chain's one plain rule pointed at the
// new dispatch chain; no set element and no rule with a set in a chain in use is replaced.
TEST(KubeProxyNft, AnAtomicChangeBuildsANewChainThenPointsTheServiceChainAtIt) {
  Endpoint a = endpoint("pod-1", "10.200.0.2");
  Endpoint b = endpoint("pod-2", "10.200.0.3");
  std::string update = nft_atomic_update(kService, {a}, {a, b}, {}, 7);
  EXPECT_EQ(count(update, "flush"), 1u) << update;
  EXPECT_EQ(update.find("element"), std::string::npos) << update;
  EXPECT_EQ(count(update, "add chain ip kube-proxy endpoint-"), 1u);  // pod-2's only
  size_t chain = update.find("add chain ip kube-proxy service-default/web/tcp/http.g7\n");
  size_t swap = update.find(
      "flush chain ip kube-proxy service-default/web/tcp/http\n"
      "add rule ip kube-proxy service-default/web/tcp/http goto service-default/web/tcp/http.g7\n");
  ASSERT_NE(chain, std::string::npos) << update;
  ASSERT_NE(swap, std::string::npos) << update;
  EXPECT_LT(chain, swap);
  // An endpoint whose chain is still there (removed a moment ago, back now) reuses it.
  EXPECT_EQ(count(nft_atomic_update(kService, {a}, {a, b}, {b}, 8),
                  "add chain ip kube-proxy "
                  "endpoint-"),
            0u);
  EXPECT_EQ(nft_delete_chains({"x", "y"}),
            "flush chain ip kube-proxy x\nflush chain ip kube-proxy y\n"
            "delete chain ip kube-proxy x\ndelete chain ip kube-proxy y\n");
}

TEST(KubeProxyNft, TheLastEndpointGoneRejectsAgain) {
  std::string update = nft_update(kService, {endpoint("pod-1", "10.200.0.2")}, {});
  EXPECT_EQ(update.find("numgen"), std::string::npos);
  EXPECT_NE(update.find("add element ip kube-proxy no-endpoint-services"), std::string::npos);
}

// The kernel takes every script of a rollout, each as one transaction, in both shapes, and the
// atomic shape's stale chains can then all be deleted (in a network namespace of its own thread:
// root and Debian's nftables only).
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
    std::vector<std::vector<Endpoint>> steps = {{}, {a}, {a, b}, {b}, {b, c}, {c}, {}, {a}};
    std::vector<std::string> scripts = {nft_base_ruleset(kService)};
    for (size_t i = 1; i < steps.size(); ++i) {
      scripts.push_back(nft_update(kService, steps[i - 1], steps[i]));
    }
    for (const std::string& script : scripts) {
      if (std::string error = nft.commit(script); !error.empty()) {
        errors.push_back(script + error);
      }
    }
    // The atomic shape from the same base: every chain it made, and never deleted, then gone.
    scripts = {"delete table ip kube-proxy\n" + nft_base_ruleset(kService)};
    std::vector<std::string> made;
    for (size_t i = 1; i < steps.size(); ++i) {
      std::vector<Endpoint> existing;
      for (const Endpoint& e : steps[i]) {
        bool seen = false;
        for (size_t j = 0; j + 1 < i; ++j) {
          seen = seen || std::any_of(steps[j].begin(), steps[j].end(), [&](const Endpoint& x) {
                   return x.ip == e.ip;
                 });
        }
        if (seen) {
          existing.push_back(e);
        }
      }
      scripts.push_back(
          nft_atomic_update(kService, steps[i - 1], steps[i], existing, static_cast<int>(i)));
      if (i > 1) {
        made.push_back(nft_service_chain(kService, static_cast<int>(i - 1)));
      }
    }
    scripts.push_back(nft_delete_chains(made));
    for (const std::string& script : scripts) {
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
  // kube-proxy's sync redeclares (so flushes) and refills filter's and nat's KUBE-SERVICES, the
  // Service's chain and every KUBE-SEP of it; REJECT only while the Service has no endpoint.
  EXPECT_NE(update.find("*filter\n:KUBE-SERVICES - [0:0]\nCOMMIT\n*nat\n:KUBE-SERVICES - [0:0]\n"),
            std::string::npos)
      << update;
  std::string steady = iptables_update(kService, {a, b, c}, {b, c});
  EXPECT_EQ(count(steady, "-X KUBE-SEP-"), 1u);
  EXPECT_EQ(count(steady, "-j DNAT"), 2u);
  EXPECT_EQ(count(steady, "-j REJECT"), 0u);
  std::string none = iptables_update(kService, {c}, {});
  EXPECT_NE(none.find("*filter\n:KUBE-SERVICES - [0:0]\n-A KUBE-SERVICES"), std::string::npos);
  EXPECT_EQ(none.find("-j KUBE-SVC-"), std::string::npos);  // no endpoint: no nat jump
}

// The atomic shape: the free one of two dispatch chains filled, the one KUBE-SERVICES rule
// replaced, a KUBE-SEP gone the change before deleted; the REJECT only at the first endpoint.
TEST(KubeProxyIptables, AnAtomicChangeFillsTheFreeChainThenReplacesTheRule) {
  Endpoint a = endpoint("pod-1", "10.200.0.2");
  Endpoint b = endpoint("pod-2", "10.200.0.3");
  std::string first = iptables_atomic_update(kService, {}, {a}, {}, 1);
  EXPECT_NE(first.find("*nat\n:KUBE-SVA-"), std::string::npos) << first;
  EXPECT_NE(first.find("-R KUBE-SERVICES 1 -d 10.96.0.10/32 -p tcp -m tcp --dport 80 -j KUBE-SVA-"),
            std::string::npos)
      << first;
  EXPECT_NE(first.find("*filter\n-D KUBE-SERVICES"), std::string::npos);
  EXPECT_EQ(count(first, ":KUBE-SERVICES"), 0u);  // never redeclared: never flushed
  std::string second = iptables_atomic_update(kService, {a}, {b}, {}, 2);
  EXPECT_NE(second.find("*nat\n:KUBE-SVB-"), std::string::npos) << second;
  EXPECT_NE(second.find("-X KUBE-SVC-"), std::string::npos);  // the base's, unused since the first
  EXPECT_EQ(count(second, "-X KUBE-SEP-"), 0u);               // pod-1's goes at the next change
  std::string third = iptables_atomic_update(kService, {b}, {b}, {a}, 3);
  EXPECT_EQ(count(third, "-X KUBE-SEP-"), 1u);
  EXPECT_EQ(third.find("*filter"), std::string::npos);
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
    Endpoint a = endpoint("pod-1", "10.200.0.2");
    Endpoint b = endpoint("pod-2", "10.200.0.3");
    Endpoint c = endpoint("pod-3", "10.200.0.4");
    std::vector<std::vector<Endpoint>> steps = {{}, {a}, {a, b}, {b}, {b, c}, {c}, {}, {a}};
    for (DataplaneSync sync : {DataplaneSync::kube_proxy, DataplaneSync::atomic}) {
      // Each shape in a namespace of its own: the atomic one from the base's chains.
      if (sync == DataplaneSync::atomic && ::unshare(CLONE_NEWNET) != 0) {
        errors.push_back("unshare failed");
        return;
      }
      std::unique_ptr<KubeProxyRules> rules = iptables_rules(sync);
      if (std::string error = rules->program_base(kService); !error.empty()) {
        errors.push_back(error);
      }
      for (size_t i = 1; i < steps.size(); ++i) {
        if (std::string error = rules->program_update(kService, steps[i - 1], steps[i]);
            !error.empty()) {
          errors.push_back(fmt::format("{} step {}: {}", to_string(sync), i, error));
        }
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
