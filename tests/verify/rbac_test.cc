#include "verify/rbac.h"

#include <algorithm>

#include <gtest/gtest.h>

namespace zerodrop::verify {
namespace {

bool has(const std::vector<Permission>& list, const std::string& text) {
  return std::any_of(list.begin(), list.end(),
                     [&](const Permission& p) { return p.text() == text; });
}

TEST(NeededPermissions, PatchOnlyToRestart) {
  EXPECT_TRUE(has(needed_permissions(Action::restart), "deployments.apps patch"));
  EXPECT_FALSE(has(needed_permissions(Action::watch), "deployments.apps patch"));
  for (const char* text : {"pods watch", "endpointslices.discovery.k8s.io watch", "events list",
                           "services get", "deployments.apps watch"}) {
    EXPECT_TRUE(has(needed_permissions(Action::watch), text)) << text;
  }
}

TEST(RoleYaml, GroupsVerbsPerResourceInTheNamespace) {
  std::string yaml = role_yaml("shop", Action::restart);
  EXPECT_NE(yaml.find("namespace: shop"), std::string::npos);
  EXPECT_NE(yaml.find("- apiGroups: [\"apps\"]\n  resources: [deployments]\n"
                      "  verbs: [get, list, watch, patch]\n"),
            std::string::npos)
      << yaml;
  EXPECT_NE(yaml.find("resources: [endpointslices]\n  verbs: [list, watch]"), std::string::npos);
  EXPECT_NE(yaml.find("kind: RoleBinding"), std::string::npos);
  EXPECT_EQ(role_yaml("shop", Action::watch).find("patch"), std::string::npos);
}

}  // namespace
}  // namespace zerodrop::verify
