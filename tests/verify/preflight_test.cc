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

TEST(ReadTemplate, PreStopDelayFromTheModelOrTheRawJson) {
  json d = naive_deployment();
  d["spec"]["template"]["spec"]["containers"][0]["lifecycle"] = {
      {"preStop", {{"exec", {{"command", {"sleep", "2"}}}}}}};
  Target target;
  read_template(d, target);
  EXPECT_EQ(target.pod_template.prestop, std::chrono::seconds(2));
  EXPECT_TRUE(target.pod_template.has_prestop);
  EXPECT_EQ(target.scenario.replicas, 3);
  // A probe port the model refuses (0): the raw JSON still gives the preStop.
  d["spec"]["template"]["spec"]["containers"][0]["readinessProbe"] = {
      {"httpGet", {{"path", "/readyz"}, {"port", 0}}}};
  d["spec"]["template"]["spec"]["containers"][0]["lifecycle"] = {
      {"preStop", {{"sleep", {{"seconds", 3}}}}}};
  Target raw;
  read_template(d, raw);
  EXPECT_EQ(raw.pod_template.prestop, std::chrono::seconds(3));
  EXPECT_EQ(raw.pod_template.container, "app");
  Target none;
  read_template(naive_deployment(), none);
  EXPECT_EQ(none.pod_template.prestop, Duration::zero());
  EXPECT_FALSE(none.pod_template.has_prestop);
  EXPECT_THROW(read_template(json::object(), none), Error);
}

}  // namespace
}  // namespace zerodrop::verify
