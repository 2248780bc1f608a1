#include "verify/preflight.h"

#include <gtest/gtest.h>

#include "base/error.h"

namespace zerodrop::verify {
namespace {

using nlohmann::json;

TEST(SelectorQuery, LabelsThenExpressions) {
  json selector = {{"matchLabels", {{"app", "web"}}},
                   {"matchExpressions",
                    json::array({{{"key", "tier"}, {"operator", "In"}, {"values", {"a", "b"}}},
                                 {{"key", "canary"}, {"operator", "DoesNotExist"}}})}};
  EXPECT_EQ(selector_query(selector), "app=web,tier in (a,b),!canary");
  EXPECT_THROW(
      selector_query({{"matchExpressions", json::array({{{"key", "x"}, {"operator", "Near"}}})}}),
      Error);
}

json naive_deployment() {
  return json::parse(R"({"apiVersion":"apps/v1","kind":"Deployment",
    "metadata":{"name":"web","namespace":"shop"},
    "spec":{"replicas":3,"selector":{"matchLabels":{"app":"web"}},
      "template":{"metadata":{"labels":{"app":"web"}},
        "spec":{"containers":[{"name":"app","image":"web:1","ports":[{"containerPort":8080}]}]}}}})");
}

TEST(AuditLive, TheAuditRulesReadTheLiveJson) {
  json service = json::parse(R"({"apiVersion":"v1","kind":"Service",
    "metadata":{"name":"web","namespace":"shop"},
    "spec":{"selector":{"app":"web"},"ports":[{"port":80,"targetPort":8080}]}})");
  auto warnings = audit_live(naive_deployment(), service);
  ASSERT_FALSE(warnings.empty());
  bool dereg = false;
  for (const std::string& w : warnings) {
    dereg = dereg || w.find("deregistration-race") != std::string::npos;
  }
  EXPECT_TRUE(dereg) << warnings.front();
}

}  // namespace
}  // namespace zerodrop::verify
