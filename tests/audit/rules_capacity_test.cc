#include <gtest/gtest.h>

#include "audit/rule.h"
#include "audit_testing.h"

namespace zerodrop::audit {
namespace {

using testing::audit_text;
using testing::deployment;
using testing::has;
using testing::kGoodContainer;
using testing::service;
using testing::with_rule;
namespace id = rule_id;

std::string hpa(int min) {
  return "---\napiVersion: autoscaling/v2\nkind: HorizontalPodAutoscaler\nmetadata: {name: web}\n"
         "spec:\n  scaleTargetRef: {apiVersion: apps/v1, kind: Deployment, name: web}\n"
         "  minReplicas: "
         + std::to_string(min) + "\n  maxReplicas: 10\n";
}

std::string pdb(const std::string& policy,
                const std::string& selector = "{matchLabels: {app: web}}") {
  return "---\napiVersion: policy/v1\nkind: PodDisruptionBudget\nmetadata: {name: web}\nspec:\n  "
         + policy + "\n  selector: " + selector + "\n";
}

Report with(const std::string& spec, const std::string& rest = "") {
  return audit_text(service() + deployment(kGoodContainer, spec) + rest);
}

TEST(CapacityRules, NilReplicasIsOneWithoutAnHpa) {
  auto found = with_rule(with(""), id::kTooFewReplicas);
  ASSERT_EQ(found.size(), 1u);
  EXPECT_NE(found[0].message.find("replicas not set"), std::string::npos);
  EXPECT_FALSE(has(with(""), id::kPdbMissing)) << "one replica: a PDB could only block drains";
}

TEST(CapacityRules, HpaMinReplicasIsTheFloor) {
  Report ok = with("", hpa(3) + pdb("maxUnavailable: 1"));
  EXPECT_FALSE(has(ok, id::kTooFewReplicas));
  EXPECT_FALSE(has(ok, id::kPdbMissing));
  auto found = with_rule(with("", hpa(1)), id::kTooFewReplicas);
  ASSERT_EQ(found.size(), 1u);
  EXPECT_NE(found[0].message.find("minReplicas 1"), std::string::npos);
  EXPECT_EQ(found[0].mark.line, 29) << "points at the HPA's minReplicas";
  EXPECT_TRUE(has(with("", hpa(3)), id::kPdbMissing)) << "an HPA floor of 3 needs a PDB";
}

TEST(CapacityRules, ExplicitReplicas) {
  EXPECT_TRUE(has(with("  replicas: 1\n"), id::kTooFewReplicas));
  EXPECT_FALSE(has(with("  replicas: 0\n"), id::kTooFewReplicas)) << "scaled to zero on purpose";
  EXPECT_FALSE(has(with("  replicas: 2\n", pdb("maxUnavailable: 1")), id::kTooFewReplicas));
}

TEST(CapacityRules, MaxUnavailableAgainstHeadroom) {
  std::string one = "  replicas: 3\n  strategy: {rollingUpdate: {maxUnavailable: 1}}\n";
  auto found = with_rule(with(one, pdb("maxUnavailable: 1")), id::kMaxUnavailable);
  ASSERT_EQ(found.size(), 1u);
  EXPECT_NE(found[0].message.find(
                "takes 1 of 3 replicas out of service during the rollout (33% of capacity, more "
                "than the 25% headroom"),
            std::string::npos)
      << found[0].message;
  EXPECT_FALSE(has(with("  replicas: 4\n", pdb("maxUnavailable: 1")), id::kMaxUnavailable))
      << "the default 25% of 4 is 1, within the headroom";
  EXPECT_FALSE(
      has(with("  replicas: 3\n  strategy: {rollingUpdate: {maxUnavailable: 0, maxSurge: 1}}\n"),
          id::kMaxUnavailable));
  Options loose;
  loose.headroom = 0.5;
  EXPECT_FALSE(
      has(audit_text(service() + deployment(kGoodContainer, one), loose), id::kMaxUnavailable));
}

TEST(CapacityRules, PdbMatchesWithFullSelectorSemantics) {
  EXPECT_TRUE(has(with("  replicas: 3\n"), id::kPdbMissing));
  EXPECT_FALSE(has(with("  replicas: 3\n",
                        pdb("maxUnavailable: 1",
                            "{matchExpressions: [{key: app, operator: In, values: [api, web]}]}")),
                   id::kPdbMissing));
  EXPECT_TRUE(
      has(with("  replicas: 3\n", pdb("maxUnavailable: 1", "{matchLabels: {app: web, tier: db}}")),
          id::kPdbMissing))
      << "every matchLabels pair must match, not any one";
  EXPECT_TRUE(has(with("  replicas: 3\n",
                       pdb("maxUnavailable: 1",
                           "{matchExpressions: [{key: app, operator: NotIn, values: [web]}]}")),
                  id::kPdbMissing));
}

TEST(CapacityRules, PdbThatBlocksEveryEviction) {
  auto found = with_rule(with("  replicas: 1\n", pdb("minAvailable: 1")), id::kPdbBlocksEviction);
  ASSERT_EQ(found.size(), 1u);
  EXPECT_NE(found[0].message.find("minAvailable 1 with 1 replicas allows no eviction"),
            std::string::npos);
  EXPECT_TRUE(has(with("  replicas: 3\n", pdb("maxUnavailable: 0")), id::kPdbBlocksEviction));
  EXPECT_TRUE(has(with("  replicas: 3\n", pdb("minAvailable: 100%")), id::kPdbBlocksEviction));
  EXPECT_FALSE(has(with("  replicas: 3\n", pdb("minAvailable: 2")), id::kPdbBlocksEviction));
  EXPECT_FALSE(has(with("  replicas: 3\n", pdb("maxUnavailable: 10%")), id::kPdbBlocksEviction))
      << "10% of 3 rounds up to 1";
}

TEST(CapacityRules, DaemonSetsAndUnservedWorkloadsAreNotCounted) {
  std::string ds = R"(apiVersion: apps/v1
kind: DaemonSet
metadata: {name: agent}
spec:
  selector: {matchLabels: {app: web}}
  template:
    metadata: {labels: {app: web}}
    spec:
      containers:
        - name: app
)";
  Report r = audit_text(service() + ds + kGoodContainer);
  EXPECT_FALSE(has(r, id::kTooFewReplicas));
  EXPECT_FALSE(has(r, id::kPdbMissing));
  Report unserved = audit_text(deployment(kGoodContainer, "  replicas: 1\n"));
  EXPECT_FALSE(has(unserved, id::kTooFewReplicas));
}

TEST(CapacityRules, InvalidPercentageIsAFindingNotACrash) {
  Report r = with("  replicas: 3\n  strategy: {rollingUpdate: {maxUnavailable: 150%}}\n");
  EXPECT_TRUE(has(r, id::kInvalidManifest));
}

}  // namespace
}  // namespace zerodrop::audit
