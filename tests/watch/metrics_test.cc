// Metrics: the OpenMetrics text of rollouts, failures by hole and class, propagation, baseline
// and agents; no pod in any label.
#include "watch/metrics.h"

#include <set>
#include <string>

#include <gtest/gtest.h>

namespace zerodrop::watch {
namespace {

RolloutResult dropped() {
  RolloutResult r;
  r.key = {"Deployment", "shop", "web"};
  r.folder = "shop.web.20261206T203000Z";
  r.agents = 3;
  r.verdict.requests = 3410;
  r.verdict.failed = 12;
  r.verdict.holes = {{"deregistration-race", 12}};
  r.verdict.by_hole_class = {{{"deregistration-race", "connect_refused"}, 10},
                             {{"deregistration-race", "reset_before_response"}, 2}};
  r.propagation = {{"node-1", 0.3}, {"node-2", 1.5}, {"node-1", 0.05}};
  return r;
}

TEST(Metrics, RolloutsFailuresAndPropagationAsOpenMetrics) {
  Metrics m;
  m.rollout_ended(dropped());
  RolloutResult clean;
  clean.key = {"Deployment", "shop", "web"};
  clean.verdict.requests = 3390;
  m.rollout_ended(clean);
  std::string text = m.text();
  EXPECT_NE(text.find("# TYPE zerodrop_watch_rollouts counter\n"), std::string::npos);
  EXPECT_NE(
      text.find(
          R"(zerodrop_watch_rollouts_total{namespace="shop",kind="Deployment",workload="web",verdict="dropped"} 1)"),
      std::string::npos);
  EXPECT_NE(
      text.find(
          R"(zerodrop_watch_rollouts_total{namespace="shop",kind="Deployment",workload="web",verdict="clean"} 1)"),
      std::string::npos);
  EXPECT_NE(
      text.find(
          R"(zerodrop_watch_rollout_requests_total{namespace="shop",kind="Deployment",workload="web"} 6800)"),
      std::string::npos);
  EXPECT_NE(
      text.find(
          R"(zerodrop_watch_failed_requests_total{namespace="shop",kind="Deployment",workload="web",hole="deregistration-race",class="connect_refused"} 10)"),
      std::string::npos);
  EXPECT_NE(text.find(R"(hole="deregistration-race",class="reset_before_response"} 2)"),
            std::string::npos);
  // Cumulative buckets per node.
  EXPECT_NE(text.find(R"(zerodrop_watch_propagation_seconds_bucket{node="node-1",le="0.1"} 1)"),
            std::string::npos);
  EXPECT_NE(text.find(R"(zerodrop_watch_propagation_seconds_bucket{node="node-1",le="0.5"} 2)"),
            std::string::npos);
  EXPECT_NE(text.find(R"(zerodrop_watch_propagation_seconds_bucket{node="node-2",le="1"} 0)"),
            std::string::npos);
  EXPECT_NE(text.find(R"(zerodrop_watch_propagation_seconds_bucket{node="node-2",le="+Inf"} 1)"),
            std::string::npos);
  EXPECT_NE(text.find(R"(zerodrop_watch_propagation_seconds_count{node="node-1"} 2)"),
            std::string::npos);
  EXPECT_TRUE(text.ends_with("# EOF\n"));
  EXPECT_EQ(text.find("pod=\""), std::string::npos);  // no pod label
}

TEST(Metrics, BaselineAgentsLeaderAndEscapedLabels) {
  Metrics m;
  m.baseline("shop", "web", 100, 1);
  m.baseline("shop", "web", 50, 0);
  m.agents(3, 1);
  m.leader(true);
  m.in_progress(2);
  std::string text = m.text();
  EXPECT_NE(
      text.find(R"(zerodrop_watch_baseline_requests_total{namespace="shop",service="web"} 150)"),
      std::string::npos);
  EXPECT_NE(
      text.find(
          R"(zerodrop_watch_baseline_failed_requests_total{namespace="shop",service="web"} 1)"),
      std::string::npos);
  EXPECT_NE(text.find("zerodrop_watch_agents{state=\"reporting\"} 3\n"), std::string::npos);
  EXPECT_NE(text.find("zerodrop_watch_agents{state=\"lost\"} 1\n"), std::string::npos);
  EXPECT_NE(text.find("zerodrop_watch_leader 1\n"), std::string::npos);
  EXPECT_NE(text.find("zerodrop_watch_rollouts_in_progress 2\n"), std::string::npos);
  EXPECT_EQ(label_value("a\"b\\c\nd"), "a\\\"b\\\\c\\nd");
}

TEST(Metrics, AgentRequestsByTargetAndPhase) {
  Metrics m;
  m.probed("shop", "web", Metrics::Target::service, false, 100, 0);
  m.probed("shop", "web", Metrics::Target::ingress, true, 40, 3);
  m.probed("shop", "web", Metrics::Target::ingress, true, 10, 1);
  std::string text = m.text();
  EXPECT_NE(text.find(R"(zerodrop_watch_probe_requests_total{namespace="shop",service="web",)"
                      R"(target="service",phase="baseline"} 100)"),
            std::string::npos);
  EXPECT_NE(text.find(R"(zerodrop_watch_probe_failed_requests_total{namespace="shop",)"
                      R"(service="web",target="ingress",phase="rollout"} 4)"),
            std::string::npos);
  EXPECT_NE(text.find(R"(zerodrop_watch_probe_requests_total{namespace="shop",service="web",)"
                      R"(target="ingress",phase="rollout"} 50)"),
            std::string::npos);
}

TEST(Metrics, EveryFamilyIsDeclaredOnceBeforeItsSamples) {
  Metrics m;
  m.rollout_ended(dropped());
  m.baseline("shop", "web", 1, 0);
  m.probed("shop", "web", Metrics::Target::ingress, false, 1, 0);
  std::string text = m.text();
  std::set<std::string> declared;
  size_t at = 0;
  while (at < text.size()) {
    size_t end = text.find('\n', at);
    std::string line = text.substr(at, end - at);
    at = end + 1;
    if (line.starts_with("# TYPE ")) {
      std::string name = line.substr(7, line.find(' ', 7) - 7);
      EXPECT_TRUE(declared.insert(name).second) << name;
    } else if (!line.starts_with("#")) {
      std::string name = line.substr(0, line.find_first_of("{ "));
      bool known = false;
      for (const std::string& family : declared) {
        known = known || name == family || name.starts_with(family + "_");
      }
      EXPECT_TRUE(known) << line;
    }
  }
}

}  // namespace
}  // namespace zerodrop::watch
